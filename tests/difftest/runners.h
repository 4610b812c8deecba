// Running an image on the reference (qemu-system-riscv32) and on our core (sim::Tile).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "platform.h"

namespace difftest {

struct RunResult {
    bool ok = false;
    std::string error;     // what went wrong when !ok (timeout, trap, exit status, ...)
    Signature signature;   // valid when ok
    uint64_t cycles = 0;   // tile only
    uint64_t instret = 0;  // tile only
};

struct QemuOptions {
    std::string qemu = "qemu-system-riscv32";
    double timeout_s = 10.0;
    std::string tmpdir = "/tmp";
};

RunResult run_qemu(const Image& img, const QemuOptions& opt);

// sim::CoreTiming, mirrored so this header does not need the model.
struct TimingKnobs {
    uint32_t l1_load_latency = 7;
    uint32_t l1_store_interval = 5;
    uint32_t ldm_load_latency = 2;
    uint32_t div_latency = 16;
    uint32_t branch_penalty = 1;
    std::string describe() const;
};

struct TileOptions {
    uint64_t cycle_budget = 5'000'000;
    TimingKnobs timing;
    std::string fst_path;  // non-empty: write a waveform of the run (Tile::trace_to)
};

RunResult run_tile(const Image& img, const TileOptions& opt);

// Run a program (not an image) through objdump; the listing is of body offsets, with a comment
// line at each block boundary. Returns a diagnostic line if objdump fails.
std::string disassemble(const Program& prog, const std::string& objdump, const std::string& tmpdir,
                        uint32_t from_word = 0, uint32_t to_word = UINT32_MAX);

// objdump's mnemonic for each word (no aliases), e.g. "addi"; "?" where it printed none.
std::vector<std::string> objdump_mnemonics(const std::vector<uint32_t>& words,
                                           const std::string& objdump, const std::string& tmpdir);

// Run a command with a deadline and capture its stdout. exit_status is -1 on timeout (the child is
// killed), -2 when the command could not be started.
struct Capture {
    int exit_status = 0;
    std::vector<uint8_t> out;
    std::string err;
};
Capture run_command(const std::vector<std::string>& argv, double timeout_s);

}  // namespace difftest
