// sim::PcieTlb: decode the TLB registers the host's driver programmed, route window accesses.
// The decoding here is written from the register tables (pcie_tlb.h), independently of the host's
// encoder (host/src/kmd_abi.cpp); tests program one and read back through the other.
#include "pcie_tlb.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "chip.h"

namespace sim {

namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kGiB = 1024 * kMiB;

std::string hex64(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

uint32_t log2u(uint64_t v) {
    uint32_t s = 0;
    while ((uint64_t{1} << s) < v) ++s;
    return s;
}

}  // namespace

PcieTlb::PcieTlb(Chip& chip) : chip_(chip), arch_(chip.spec().arch) {
    const auto add = [&](uint32_t n, uint64_t size, uint32_t bar, uint64_t at) {
        for (uint32_t i = 0; i < n; ++i) windows_.push_back({size, bar, at + i * size});
    };
    if (arch_ == hal::Arch::WormholeB0) {
        add(156, 1 * kMiB, 0, 0x0);
        add(10, 2 * kMiB, 0, 0x9C00000);
        add(20, 16 * kMiB, 0, 0xB000000);
        stride_ = 8;
    } else {
        add(202, 2 * kMiB, 0, 0x0);
        add(8, 4 * kGiB, 4, 0x0);
        stride_ = 12;
    }
    regs_.assign(windows_.size() * stride_ / 4, 0);
}

const PcieTlb::Window& PcieTlb::window(uint32_t index) const {
    if (index >= windows_.size()) {
        throw std::out_of_range("PCIe TLB of " + chip_.name() + ": window " +
                                std::to_string(index) + " does not exist (" +
                                std::to_string(windows_.size()) + " windows)");
    }
    return windows_[index];
}

bool PcieTlb::decodes(uint64_t off) const {
    return off >= kConfigBase && off < kConfigBase + regs_.size() * 4 && off % 4 == 0;
}

std::optional<uint32_t> PcieTlb::bar0_read32(uint64_t off) const {
    if (!decodes(off)) return std::nullopt;
    return regs_[(off - kConfigBase) / 4];
}

bool PcieTlb::bar0_write32(uint64_t off, uint32_t value) {
    if (!decodes(off)) return false;
    regs_[(off - kConfigBase) / 4] = value;
    return true;
}

PcieTlb::Config PcieTlb::config(uint32_t index) const {
    const Window& w = window(index);
    __extension__ typedef unsigned __int128 u128;
    u128 v = 0;
    for (uint32_t k = 0; k < stride_ / 4; ++k)
        v |= u128{regs_[index * stride_ / 4 + k]} << (32 * k);
    const uint32_t shift = log2u(w.size);
    uint32_t addr_bits = 0, noc_bits = 0;
    if (arch_ == hal::Arch::WormholeB0) {
        addr_bits = 36 - shift;
        noc_bits = 1;
    } else {
        addr_bits = w.size == 2 * kMiB ? 43 : 32;
        noc_bits = 2;
    }
    uint32_t at = 0;
    const auto take = [&](uint32_t bits) {
        const uint64_t f = static_cast<uint64_t>((v >> at) & ((u128{1} << bits) - 1));
        at += bits;
        return f;
    };
    Config c;
    c.addr = take(addr_bits) << shift;
    c.x_end = static_cast<uint32_t>(take(6));
    c.y_end = static_cast<uint32_t>(take(6));
    c.x_start = static_cast<uint32_t>(take(6));
    c.y_start = static_cast<uint32_t>(take(6));
    c.noc = static_cast<uint32_t>(take(noc_bits));
    c.mcast = take(1) != 0;
    c.ordering = static_cast<uint32_t>(take(2));
    c.linked = take(1) != 0;
    if (arch_ == hal::Arch::WormholeB0) {
        c.static_vc = static_cast<uint32_t>(take(1));
    } else {
        const bool use = take(1) != 0;
        (void)take(1);  // stream_header
        const uint32_t vc = static_cast<uint32_t>(take(3));
        c.static_vc = use ? vc : 0;
    }
    return c;
}

std::string PcieTlb::what(uint32_t index) const {
    const Window& w = window(index);
    return "PCIe TLB window " + std::to_string(index) + " (" + std::to_string(w.size / 1024) +
           " KiB) of " + chip_.name();
}

std::vector<PcieTlb::Target> PcieTlb::targets(uint32_t index, uint64_t offset, std::size_t len,
                                              bool write) const {
    const Window& w = window(index);
    if (offset > w.size || len > w.size - offset) {
        throw std::out_of_range(what(index) + ": access of " + std::to_string(len) + " bytes at " +
                                hex64(offset) + " leaves the window");
    }
    const Config c = config(index);
    const uint64_t addr = c.addr + offset;
    if (addr + len > (uint64_t{1} << 32)) {
        throw std::out_of_range(what(index) + ": NOC address " + hex64(addr) +
                                " is beyond the cores' 32-bit address space");
    }
    const uint32_t gx = chip_.spec().grid_x, gy = chip_.spec().grid_y;
    const auto noc0 = [&](uint32_t x, uint32_t y, uint32_t& x0, uint32_t& y0) {
        if (x >= gx || y >= gy) {
            throw std::out_of_range(what(index) + ": NOC" + std::to_string(c.noc) + " coordinate " +
                                    std::to_string(x) + "-" + std::to_string(y) +
                                    " is outside the " + std::to_string(gx) + "x" +
                                    std::to_string(gy) + " grid");
        }
        x0 = c.noc == 0 ? x : gx - 1 - x;
        y0 = c.noc == 0 ? y : gy - 1 - y;
    };
    std::vector<Target> out;
    if (!c.mcast) {
        uint32_t x0, y0;
        noc0(c.x_end, c.y_end, x0, y0);
        if (chip_.core_spec(x0, y0) == nullptr) {
            throw std::out_of_range(what(index) + ": no modelled core at " + std::to_string(x0) +
                                    "-" + std::to_string(y0) + " (NOC0)");
        }
        out.push_back({x0, y0, static_cast<uint32_t>(addr)});
        return out;
    }
    if (!write) throw std::out_of_range(what(index) + ": a multicast window cannot be read");
    if (c.x_start > c.x_end || c.y_start > c.y_end) {
        throw std::out_of_range(what(index) + ": multicast rectangles that wrap are not modelled");
    }
    for (uint32_t y = c.y_start; y <= c.y_end; ++y) {
        for (uint32_t x = c.x_start; x <= c.x_end; ++x) {
            uint32_t x0, y0;
            noc0(x, y, x0, y0);
            if (chip_.core_spec(x0, y0) != nullptr)
                out.push_back({x0, y0, static_cast<uint32_t>(addr)});
        }
    }
    return out;
}

bool PcieTlb::sim_status_read(const Target& t, std::span<uint8_t> bytes) const {
    if (t.addr < kSimStatusBase || t.addr >= kSimStatusEnd) return false;
    if (t.addr % 4 != 0 || bytes.size() % 4 != 0 || t.addr + bytes.size() > kSimStatusEnd) {
        throw std::out_of_range("sim status words at " + hex64(t.addr) +
                                " are whole aligned words");
    }
    const Tile* tile = chip_.find_tile(t.x, t.y);
    for (std::size_t i = 0; i < bytes.size(); i += 4) {
        uint32_t v = 0;
        if (tile != nullptr) {
            const TrapInfo trap = tile->state() == RunState::Trapped ? tile->trap() : TrapInfo{};
            switch (t.addr + i) {
                case kSimStatusRunState:
                    v = static_cast<uint32_t>(tile->state());
                    break;
                case kSimStatusExitCode:
                    v = tile->state() == RunState::Exited ? tile->exit_code() : 0;
                    break;
                case kSimStatusPc:
                    v = tile->pc();
                    break;
                case kSimStatusTrapCause:
                    v = trap.cause;
                    break;
                case kSimStatusTrapPc:
                    v = trap.pc;
                    break;
                case kSimStatusTrapTval:
                    v = trap.tval;
                    break;
                default:
                    v = 0;
                    break;
            }
        }
        std::memcpy(bytes.data() + i, &v, 4);
    }
    return true;
}

void PcieTlb::write(uint32_t index, uint64_t offset, std::span<const uint8_t> bytes) {
    if (bytes.empty()) return;
    const auto ts = targets(index, offset, bytes.size(), true);
    ++accesses_;
    for (const Target& t : ts) chip_.write(t.x, t.y, t.addr, bytes);
}

void PcieTlb::read(uint32_t index, uint64_t offset, std::span<uint8_t> bytes) {
    if (bytes.empty()) return;
    const auto ts = targets(index, offset, bytes.size(), false);
    ++accesses_;
    if (sim_status_read(ts.front(), bytes)) return;
    chip_.read(ts.front().x, ts.front().y, ts.front().addr, bytes);
}

}  // namespace sim
