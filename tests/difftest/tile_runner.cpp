#include <cstdio>

#include "hal/arch_map.h"
#include "runners.h"
#include "sim/model/tile.h"

namespace difftest {

std::string TimingKnobs::describe() const {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "l1_load_latency=%u l1_store_interval=%u ldm_load_latency=%u div_latency=%u "
                  "branch_penalty=%u",
                  l1_load_latency, l1_store_interval, ldm_load_latency, div_latency,
                  branch_penalty);
    return buf;
}

namespace {
// "0x000093c9 (body +0x309)", or "(prologue/epilogue)" outside the body.
std::string where(const Image& img, uint32_t pc) {
    char buf[64];
    if (pc >= img.body_addr && pc - img.body_addr < 0x10000)
        std::snprintf(buf, sizeof buf, "0x%08x (body +0x%x)", pc, pc - img.body_addr);
    else
        std::snprintf(buf, sizeof buf, "0x%08x (outside the body)", pc);
    return buf;
}
}  // namespace

RunResult run_tile(const Image& img, const TileOptions& opt) {
    RunResult res;
    sim::TileConfig cfg;
    cfg.name = "difftest";
    cfg.timing.l1_load_latency = opt.timing.l1_load_latency;
    cfg.timing.l1_store_interval = opt.timing.l1_store_interval;
    cfg.timing.ldm_load_latency = opt.timing.ldm_load_latency;
    cfg.timing.div_latency = opt.timing.div_latency;
    cfg.timing.branch_penalty = opt.timing.branch_penalty;
    sim::Tile tile(cfg);
    if (!opt.fst_path.empty()) tile.trace_to(opt.fst_path);
    tile.write(img.base, img.bytes);
    tile.write32(hal::common::kErisc0ResetPcReg, img.base);
    tile.write32(hal::common::kSoftResetReg, 0);
    tile.step(opt.cycle_budget);
    res.cycles = tile.cycles();
    res.instret = tile.instret();

    char buf[256];
    switch (tile.state()) {
        case sim::RunState::Exited:
            if (tile.exit_code() != 0) {
                res.error = "core exited with status " + std::to_string(tile.exit_code());
                return res;
            }
            break;
        case sim::RunState::Trapped: {
            sim::TrapInfo t = tile.trap();
            std::snprintf(buf, sizeof buf, "core trapped: %s (mcause %u) at pc %s, tval 0x%08x",
                          sim::trap_cause_name(t.cause), t.cause, where(img, t.pc).c_str(), t.tval);
            res.error = buf;
            return res;
        }
        case sim::RunState::Running:
            std::snprintf(buf, sizeof buf, "core still running after %llu cycles, pc %s",
                          static_cast<unsigned long long>(opt.cycle_budget),
                          where(img, tile.pc()).c_str());
            res.error = buf;
            return res;
        default:
            res.error = "core never left reset";
            return res;
    }
    std::vector<uint8_t> raw(kSignatureBytes);
    tile.read(img.sig_addr, raw);
    res.signature = parse_signature(raw);
    res.ok = true;
    return res;
}

}  // namespace difftest
