#include "fw_harness.h"

#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "fabric/elf.h"
#include "fabric/soc_descriptor.h"
#include "hal/status.h"

#ifndef FABRIC_FIRMWARE_DIR
#error "FABRIC_FIRMWARE_DIR must name <build>/firmware"
#endif
#ifndef FABRIC_SOC_DESCRIPTOR_DIR
#error "FABRIC_SOC_DESCRIPTOR_DIR must name the soc_descriptors folder"
#endif

namespace simfw {

namespace hc = hal::common;

std::string Core::str() const {
    std::ostringstream s;
    s << "chip " << chip << " core " << x << "-" << y;
    return s.str();
}

const fabric::SocDescriptor& soc_descriptor(hal::Arch arch) {
    static const fabric::SocDescriptor wh = fabric::SocDescriptor::load_file(
        std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/wormhole_b0_80_arch.yaml");
    static const fabric::SocDescriptor bh = fabric::SocDescriptor::load_file(
        std::string(FABRIC_SOC_DESCRIPTOR_DIR) + "/blackhole_140_arch.yaml");
    return arch == hal::Arch::Blackhole ? bh : wh;
}

std::string firmware_path(hal::Arch arch, const std::string& name) {
    return std::string(FABRIC_FIRMWARE_DIR) + "/" + hal::arch_map(arch).name + "/" + name + ".elf";
}

const fabric::ElfImage& firmware(hal::Arch arch, const std::string& name) {
    static std::mutex m;
    static std::map<std::string, fabric::ElfImage> cache;
    std::lock_guard<std::mutex> lock(m);
    const std::string path = firmware_path(arch, name);
    auto it = cache.find(path);
    if (it == cache.end()) {
        fabric::ElfImage img = fabric::ElfImage::load_file(path);
        const hal::ArchMap& a = hal::arch_map(arch);
        img.check_placement(fabric::erisc_placement(a, a.eth_l1_size));
        it = cache.emplace(path, std::move(img)).first;
    }
    return it->second;
}

namespace {

const char* state_name(sim::RunState s) {
    switch (s) {
        case sim::RunState::Reset:
            return "held in reset";
        case sim::RunState::Running:
            return "running";
        case sim::RunState::Exited:
            return "exited";
        case sim::RunState::Trapped:
            return "trapped";
        default:
            return "unknown";
    }
}

std::string hex(uint32_t v) {
    std::ostringstream s;
    s << "0x" << std::hex << v;
    return s.str();
}

}  // namespace

Rig::Rig(uint32_t chips, hal::Arch arch)
    : arch_(hal::arch_map(arch)),
      device_(soc_descriptor(arch), arch, chips),
      cluster_(device_.cluster()) {}

Rig::Rig(const fabric::ClusterDescriptor& cluster)
    : arch_(hal::arch_map(cluster.arch())),
      device_(soc_descriptor(cluster.arch()), cluster.arch(),
              fabric::SimDeviceOptions{cluster, std::nullopt}),
      cluster_(device_.cluster()) {}

Core Rig::eth(uint32_t chip, uint32_t channel) {
    const sim::noc::Coord c = cluster_.chip(chip).eth_core(channel);
    return Core{chip, c.x, c.y};
}

void Rig::connect(uint32_t chip_a, uint32_t chan_a, uint32_t chip_b, uint32_t chan_b) {
    cluster_.connect(chip_a, chan_a, chip_b, chan_b);
}

sim::eth::Link& Rig::link(Core c) {
    const auto ch = cluster_.chip(c.chip).eth_channel(c.x, c.y);
    if (!ch) {
        throw std::invalid_argument(c.str() + " is not an eth core");
    }
    return cluster_.link(c.chip, *ch);
}

void Rig::load_image(Core c, const std::string& name) {
    sim::Chip& ch = cluster_.chip(c.chip);
    ch.write32(c.x, c.y, hc::kSoftResetReg, hc::kSoftResetAllRiscs);
    const fabric::ElfImage& img = firmware(arch_.arch, name);
    for (const fabric::ElfSegment& seg : img.segments()) {
        ch.write(c.x, c.y, seg.address, seg.bytes);
    }
    ch.write32(c.x, c.y, hc::kErisc0ResetPcReg, img.entry());
}

void Rig::load_words(Core c, const std::string& name, protocol::KernelRole role,
                     const std::vector<uint32_t>& args) {
    load_image(c, name);
    write_mailbox(c, role, args);
}

void Rig::write_mailbox(Core c, protocol::KernelRole role, const std::vector<uint32_t>& args) {
    sim::Chip& ch = cluster_.chip(c.chip);
    protocol::TestMailbox m{};
    m.magic = protocol::kTestMailboxMagic;
    m.role = static_cast<uint32_t>(role);
    m.num_args = static_cast<uint32_t>(args.size());
    std::memcpy(m.args, args.data(), 4 * args.size());
    std::vector<uint8_t> bytes(sizeof m);
    std::memcpy(bytes.data(), &m, sizeof m);
    ch.write(c.x, c.y, mailbox_addr(), bytes);
}

fabric::LaunchTarget Rig::target(Core c, const std::string& name) {
    const fabric::SocDescriptor& soc = device_.soc(c.chip);
    const bool eth = soc.core_type({c.x, c.y}) == fabric::CoreType::Eth;
    const uint32_t l1 = eth ? soc.eth_l1_size() : soc.worker_l1_size();
    return fabric::LaunchTarget{c.location(), &firmware(arch_.arch, name),
                                fabric::erisc_placement(arch_, l1)};
}

void Rig::release(Core c) {
    cluster_.chip(c.chip).write32(c.x, c.y, hc::kSoftResetReg,
                                  hc::kSoftResetAllRiscs & ~hc::kSoftResetErisc0);
}

sim::RunReport Rig::run(uint64_t max_cycles) {
    return cluster_.run_until_done(max_cycles);
}

bool Rig::drain_links(uint64_t max_cycles) {
    return run_until(
        [&] {
            for (uint32_t chip = 0; chip < cluster_.chip_count(); ++chip) {
                sim::Chip& ch = cluster_.chip(chip);
                for (uint32_t n = 0; n < ch.eth_channels(); ++n) {
                    const sim::noc::Coord e = ch.eth_core(n);
                    if (ch.instantiated(e.x, e.y) && cluster_.peer(chip, n) &&
                        !cluster_.link(chip, n).idle()) {
                        return false;
                    }
                }
            }
            return true;
        },
        max_cycles, 16);
}

protocol::TestMailbox Rig::mailbox(Core c) {
    protocol::TestMailbox m{};
    std::vector<uint8_t> bytes(sizeof m);
    cluster_.chip(c.chip).read(c.x, c.y, mailbox_addr(), bytes);
    std::memcpy(&m, bytes.data(), sizeof m);
    return m;
}

void Rig::terminate(Core c, uint32_t value) {
    write32(c, mailbox_addr() + offsetof(protocol::TestMailbox, termination), value);
}

sim::RunState Rig::state(Core c) {
    return cluster_.chip(c.chip).tile(c.x, c.y).state();
}

uint32_t Rig::exit_code(Core c) {
    return cluster_.chip(c.chip).tile(c.x, c.y).exit_code();
}

bool Rig::passed(Core c) {
    return state(c) == sim::RunState::Exited && exit_code(c) == 0 &&
           mailbox(c).status == static_cast<uint32_t>(protocol::TestStatus::Done);
}

std::string Rig::describe(Core c) {
    sim::Tile& t = cluster_.chip(c.chip).tile(c.x, c.y);
    const protocol::TestMailbox m = mailbox(c);
    std::ostringstream s;
    s << c.str() << ": " << state_name(t.state()) << " at cycle " << cluster_.cycle() << ", pc "
      << hex(t.pc());
    if (t.state() == sim::RunState::Exited) {
        s << ", exit code " << t.exit_code();
    }
    if (t.state() == sim::RunState::Trapped) {
        const sim::TrapInfo tr = t.trap();
        s << ", trap " << sim::trap_cause_name(tr.cause) << " at " << hex(tr.pc) << " tval "
          << hex(tr.tval);
    }
    s << "\n  mailbox: status " << hex(m.status) << ", heartbeat " << m.heartbeat << ", stuck_at "
      << hex(m.stuck_at) << ", results " << m.num_results;
    protocol::TestFailure f{};
    std::memcpy(&f, m.results, sizeof f);
    if (f.code != 0) {
        s << "\n  failure: code " << f.code << ", hal status "
          << hal::to_string(static_cast<hal::Status>(f.hal_status)) << ", step " << f.step
          << ", detail " << f.detail << " (" << hex(f.detail) << ")";
    }
    const std::string console = device_.console(c.location());
    if (!console.empty()) {
        s << "\n  console: " << console;
    }
    return s.str();
}

std::vector<uint8_t> Rig::read(Core c, uint32_t addr, uint32_t bytes) {
    std::vector<uint8_t> v(bytes);
    cluster_.chip(c.chip).read(c.x, c.y, addr, v);
    return v;
}

std::vector<uint32_t> Rig::read_words(Core c, uint32_t addr, uint32_t words) {
    const std::vector<uint8_t> b = read(c, addr, 4 * words);
    std::vector<uint32_t> w(words);
    std::memcpy(w.data(), b.data(), b.size());
    return w;
}

uint32_t Rig::read32(Core c, uint32_t addr) {
    return cluster_.chip(c.chip).read32(c.x, c.y, addr);
}

void Rig::write(Core c, uint32_t addr, const std::vector<uint8_t>& bytes) {
    cluster_.chip(c.chip).write(c.x, c.y, addr, bytes);
}

void Rig::write32(Core c, uint32_t addr, uint32_t value) {
    cluster_.chip(c.chip).write32(c.x, c.y, addr, value);
}

void Rig::zero(Core c, uint32_t addr, uint32_t bytes) {
    write(c, addr, std::vector<uint8_t>(bytes, 0));
}

uint32_t Rig::pattern_mismatches(Core c, uint32_t addr, uint32_t bytes, uint32_t seed) {
    const std::vector<uint32_t> w = read_words(c, addr, bytes / 4);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < w.size(); ++i) {
        if (w[i] != protocol::pattern_word(seed, i)) ++bad;
    }
    return bad;
}

void Rig::fill_pattern(Core c, uint32_t addr, uint32_t bytes, uint32_t seed) {
    std::vector<uint8_t> b(bytes);
    for (uint32_t i = 0; i < bytes / 4; ++i) {
        const uint32_t w = protocol::pattern_word(seed, i);
        std::memcpy(b.data() + 4 * i, &w, 4);
    }
    write(c, addr, b);
}

}  // namespace simfw
