// sim::Tile: the C++ harness around the Verilated erisc_tile (sim/rtl/erisc_tile.sv).
//
// The hot path is Tile::step: two eval() calls per clock and one test of the `attn` output. Only
// when attn is high (console character, external MMIO request or acknowledge, core halted) does
// the harness do any work. L1 lives here and the RTL reaches it through the DPI-C functions at the
// bottom of this file, once per clock edge at most per port (a synchronous SRAM).
#include "tile.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "Verisc_tile.h"
#include "Verisc_tile__Dpi.h"
#include "verilated.h"
#if SIM_TILE_TRACE
#include "verilated_fst_c.h"
#endif

namespace sim {

namespace {

// What the RTL's l1_handle input points at.
struct L1Backing {
    uint32_t* words = nullptr;
    uint32_t num_words = 0;
};

constexpr uint32_t kLdmMaxBytes =
    std::max(hal::kWormholeB0.local_data_ram_size, hal::kBlackhole.local_data_ram_size);

std::string hex(uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

void check_knob(const char* what, uint32_t value, uint32_t min) {
    if (value < min || value > 255) {
        throw std::invalid_argument("sim::Tile: timing knob " + std::string(what) + " = " +
                                    std::to_string(value) + " is outside [" + std::to_string(min) +
                                    ", 255]");
    }
}

}  // namespace

const char* trap_cause_name(uint32_t cause) {
    switch (cause) {
        case 0:
            return "instruction address misaligned";
        case 1:
            return "instruction access fault";
        case 2:
            return "illegal instruction";
        case 3:
            return "breakpoint";
        case 4:
            return "load address misaligned";
        case 5:
            return "load access fault";
        case 6:
            return "store address misaligned";
        case 7:
            return "store access fault";
        case 11:
            return "environment call from M-mode";
        default:
            return "unknown cause";
    }
}

struct Tile::Impl {
    TileConfig cfg;
    std::vector<uint32_t> l1;
    L1Backing backing;
    std::unique_ptr<VerilatedContext> ctx;
    std::unique_ptr<Verisc_tile> top;
#if SIM_TILE_TRACE
    std::unique_ptr<VerilatedFstC> fst;
#endif
    uint64_t cycles = 0;
    uint64_t trace_time = 0;
    std::string console;
    std::function<void(char)> console_sink;
    MmioHandler mmio;

    bool tracing() const {
#if SIM_TILE_TRACE
        return fst != nullptr;
#else
        return false;
#endif
    }

    void dump() {
#if SIM_TILE_TRACE
        fst->dump(trace_time);
#endif
        ++trace_time;
    }

    // Everything that is not a plain clock edge. Returns true when the core has halted.
    bool service() {
        Verisc_tile& t = *top;
        if (t.console_valid) {
            const char c = static_cast<char>(t.console_char);
            if (console_sink)
                console_sink(c);
            else
                console.push_back(c);
        }
        if (t.mmio_ack) t.mmio_rsp_valid = 0;
        if (t.mmio_req_valid && !t.mmio_rsp_valid) answer_mmio();
        return t.halted;
    }

    void answer_mmio() {
        Verisc_tile& t = *top;
        const uint32_t addr = t.mmio_req_addr;
        const uint32_t be = t.mmio_req_be;
        bool ok = false;
        uint32_t rdata = 0;
        if (t.mmio_req_write) {
            ok = mmio.write && mmio.write(addr, t.mmio_req_wdata, be);
        } else if (mmio.read) {
            const std::optional<uint32_t> v = mmio.read(addr, be);
            ok = v.has_value();
            rdata = v.value_or(0);
        }
        t.mmio_rsp_rdata = rdata;
        t.mmio_rsp_err = ok ? 0 : 1;
        t.mmio_rsp_valid = 1;
    }

    // `n` clock cycles, stopping after the cycle in which the core halts.
    template <bool Traced>
    uint64_t run(uint64_t n) {
        Verisc_tile& t = *top;
        uint64_t i = 0;
        while (i < n) {
            t.clk = 1;
            t.eval();
            if constexpr (Traced) dump();
            ++i;
            const bool stop = t.attn && service();
            t.clk = 0;
            t.eval();
            if constexpr (Traced) dump();
            if (stop) break;
        }
        cycles += i;
        return i;
    }

    uint64_t cycle_once() {
        return tracing() ? run<true>(1) : run<false>(1);
    }

    // One access through the NOC-side register port (one clock cycle).
    uint32_t reg_access(uint32_t addr, bool write, uint32_t wdata) {
        Verisc_tile& t = *top;
        t.ext_valid = 1;
        t.ext_write = write ? 1 : 0;
        t.ext_addr = addr;
        t.ext_wdata = wdata;
        t.clk = 1;
        t.eval();
        if (tracing()) dump();
        t.ext_valid = 0;
        const bool error = t.ext_error;
        const uint32_t rdata = t.ext_rdata;
        if (t.attn) service();
        t.clk = 0;
        t.eval();
        if (tracing()) dump();
        ++cycles;
        if (error) {
            throw std::out_of_range("sim::Tile " + cfg.name + ": no register answers at " +
                                    hex(addr) + " (" + (write ? "write" : "read") + ")");
        }
        return rdata;
    }

    bool in_l1(uint32_t addr, size_t len) const {
        return addr <= cfg.l1_size && len <= cfg.l1_size - addr;
    }

    uint8_t* l1_bytes() {
        return reinterpret_cast<uint8_t*>(l1.data());
    }
};

Tile::Tile(const TileConfig& cfg) : impl_(std::make_unique<Impl>()) {
    Impl& s = *impl_;
    s.cfg = cfg;
    if (cfg.l1_size == 0 || cfg.l1_size % 4 != 0 || cfg.l1_size > hal::simctrl::kBase) {
        throw std::invalid_argument(
            "sim::Tile " + cfg.name + ": l1_size " + std::to_string(cfg.l1_size) +
            " must be a non-zero multiple of 4 ending below the sim-control block");
    }
    if (cfg.ldm_size % 4 != 0 || cfg.ldm_size > kLdmMaxBytes) {
        throw std::invalid_argument(
            "sim::Tile " + cfg.name + ": ldm_size " + std::to_string(cfg.ldm_size) +
            " must be a multiple of 4 and at most " + std::to_string(kLdmMaxBytes));
    }
    const CoreTiming& tm = cfg.timing;
    check_knob("l1_load_latency", tm.l1_load_latency, 1);
    check_knob("l1_store_interval", tm.l1_store_interval, 1);
    check_knob("ldm_load_latency", tm.ldm_load_latency, 1);
    check_knob("div_latency", tm.div_latency, 1);
    check_knob("branch_penalty", tm.branch_penalty, 0);

    s.l1.assign(cfg.l1_size / 4, 0);
    s.backing.words = s.l1.data();
    s.backing.num_words = cfg.l1_size / 4;

    s.ctx = std::make_unique<VerilatedContext>();
#if SIM_TILE_TRACE
    s.ctx->traceEverOn(true);
#endif
    s.top = std::make_unique<Verisc_tile>(s.ctx.get(), cfg.name.c_str());
    Verisc_tile& t = *s.top;
    t.l1_handle = reinterpret_cast<uint64_t>(&s.backing);
    t.l1_size = cfg.l1_size;
    t.ldm_size = cfg.ldm_size;
    t.hartid = cfg.hartid;
    t.l1_load_latency = static_cast<uint8_t>(tm.l1_load_latency);
    t.l1_store_interval = static_cast<uint8_t>(tm.l1_store_interval);
    t.ldm_load_latency = static_cast<uint8_t>(tm.ldm_load_latency);
    t.div_latency = static_cast<uint8_t>(tm.div_latency);
    t.branch_penalty = static_cast<uint8_t>(tm.branch_penalty);
    t.ext_valid = 0;
    t.mmio_rsp_valid = 0;

    // Power-on reset: two clocks with rst high. Time starts after it.
    t.rst = 1;
    for (int i = 0; i < 2; ++i) {
        t.clk = 0;
        t.eval();
        t.clk = 1;
        t.eval();
    }
    t.rst = 0;
    t.clk = 0;
    t.eval();
    s.cycles = 0;
}

Tile::~Tile() {
    if (impl_ && impl_->top) {
#if SIM_TILE_TRACE
        if (impl_->fst) impl_->fst->close();
#endif
        impl_->top->final();
    }
}

const TileConfig& Tile::config() const {
    return impl_->cfg;
}

void Tile::write(uint32_t addr, std::span<const uint8_t> bytes) {
    Impl& s = *impl_;
    if (bytes.empty()) return;
    if (s.in_l1(addr, bytes.size())) {
        std::memcpy(s.l1_bytes() + addr, bytes.data(), bytes.size());
        return;
    }
    if (addr < s.cfg.l1_size || addr % 4 != 0 || bytes.size() % 4 != 0) {
        throw std::out_of_range("sim::Tile " + s.cfg.name + ": write of " +
                                std::to_string(bytes.size()) + " bytes at " + hex(addr) +
                                " is neither inside L1 nor whole aligned register words");
    }
    for (size_t i = 0; i < bytes.size(); i += 4) {
        uint32_t w;
        std::memcpy(&w, bytes.data() + i, 4);
        s.reg_access(addr + static_cast<uint32_t>(i), true, w);
    }
}

void Tile::read(uint32_t addr, std::span<uint8_t> bytes) {
    Impl& s = *impl_;
    if (bytes.empty()) return;
    if (s.in_l1(addr, bytes.size())) {
        std::memcpy(bytes.data(), s.l1_bytes() + addr, bytes.size());
        return;
    }
    if (addr < s.cfg.l1_size || addr % 4 != 0 || bytes.size() % 4 != 0) {
        throw std::out_of_range("sim::Tile " + s.cfg.name + ": read of " +
                                std::to_string(bytes.size()) + " bytes at " + hex(addr) +
                                " is neither inside L1 nor whole aligned register words");
    }
    for (size_t i = 0; i < bytes.size(); i += 4) {
        const uint32_t w = s.reg_access(addr + static_cast<uint32_t>(i), false, 0);
        std::memcpy(bytes.data() + i, &w, 4);
    }
}

void Tile::write32(uint32_t addr, uint32_t value) {
    uint8_t b[4];
    std::memcpy(b, &value, 4);
    write(addr, b);
}

uint32_t Tile::read32(uint32_t addr) {
    uint8_t b[4];
    read(addr, b);
    uint32_t v;
    std::memcpy(&v, b, 4);
    return v;
}

uint64_t Tile::step(uint64_t cycles) {
    Impl& s = *impl_;
    if (s.top->halted) return 0;
    return s.tracing() ? s.run<true>(cycles) : s.run<false>(cycles);
}

RunState Tile::state() const {
    const Verisc_tile& t = *impl_->top;
    if (t.core_in_reset) return RunState::Reset;
    if (t.exited) return RunState::Exited;
    if (t.halted) return RunState::Trapped;
    return RunState::Running;
}

uint32_t Tile::exit_code() const {
    return impl_->top->exit_code;
}

TrapInfo Tile::trap() const {
    const Verisc_tile& t = *impl_->top;
    return TrapInfo{.cause = t.trap_cause, .pc = t.trap_pc, .tval = t.trap_tval};
}

uint64_t Tile::cycles() const {
    return impl_->cycles;
}
uint64_t Tile::instret() const {
    return impl_->top->instret;
}
uint32_t Tile::pc() const {
    return impl_->top->pc;
}

void Tile::on_console(std::function<void(char)> sink) {
    impl_->console_sink = std::move(sink);
}
const std::string& Tile::console() const {
    return impl_->console;
}

void Tile::set_mmio_handler(MmioHandler handler) {
    impl_->mmio = std::move(handler);
}

bool Tile::tracing_available() {
    return SIM_TILE_TRACE != 0;
}

void Tile::trace_to(const std::string& fst_path) {
#if SIM_TILE_TRACE
    Impl& s = *impl_;
    if (s.fst) s.fst->close();
    s.fst = std::make_unique<VerilatedFstC>();
    s.top->trace(s.fst.get(), 99);
    s.fst->open(fst_path.c_str());
    if (!s.fst->isOpen()) {
        s.fst.reset();
        throw std::runtime_error("sim::Tile " + s.cfg.name + ": cannot open trace file " +
                                 fst_path);
    }
    s.dump();
#else
    throw std::runtime_error("sim::Tile " + impl_->cfg.name +
                             ": built without tracing, cannot trace to " + fst_path);
#endif
}

}  // namespace sim

// -------------------------------------------------------------------------------------------------
// DPI-C imports of erisc_tile.sv. `handle` is the L1Backing of the calling tile; the RTL only
// calls with word_index < l1_size / 4, the range check here is a second line of defence.
unsigned int l1_read32(unsigned long long handle, unsigned int word_index) {
    const auto* b = reinterpret_cast<const sim::L1Backing*>(handle);
    return word_index < b->num_words ? b->words[word_index] : 0u;
}

void l1_write32(unsigned long long handle, unsigned int word_index, unsigned int data,
                unsigned int byte_enable) {
    auto* b = reinterpret_cast<sim::L1Backing*>(handle);
    if (word_index >= b->num_words) return;
    uint32_t mask = 0;
    for (int i = 0; i < 4; ++i) {
        if (byte_enable & (1u << i)) mask |= 0xFFu << (8 * i);
    }
    uint32_t& w = b->words[word_index];
    w = (w & ~mask) | (data & mask);
}
