// difftest: seeded random RV32IM programs on qemu-system-riscv32 (reference) and on our core
// (sim::Tile), compared by signature (final registers + data region).
//
//   difftest --seeds 0:300            run seeds [0, 300); exit 1 if any diverges
//   difftest --seed 1234 [--minimize] [--dump DIR]   one seed, with the full report
//   difftest --selftest               checks that the checker itself can fail (see below)
//   difftest --seed 1234 --units 98 --fst /tmp/w.fst   the minimized program, with a waveform
// Options: --qemu PATH, --objdump PATH, --tmpdir DIR, --timeout SECONDS, --cycles N,
//          --default-tile (every seed on default timing with data in L1; otherwise each seed
//          also picks timing knobs and whether its data lives in L1 or the local data RAM),
//          --dut tile|qemu-alt|qemu-mutant (qemu-alt: QEMU with every address moved, which checks
//          the generator; qemu-mutant: qemu-alt with sra executed as srl, a known-bad device)
//
// Exit codes: 0 all identical, 1 divergence or a platform failure, 2 bad usage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "platform.h"
#include "program_gen.h"
#include "runners.h"

#ifndef DIFFTEST_QEMU
#define DIFFTEST_QEMU "qemu-system-riscv32"
#endif
#ifndef DIFFTEST_OBJDUMP
#define DIFFTEST_OBJDUMP "riscv64-unknown-elf-objdump"
#endif

namespace difftest {
namespace {

struct Config {
    QemuOptions qemu;
    TileOptions tile;
    std::string objdump = DIFFTEST_OBJDUMP;
    std::string dut = "tile";
    std::string argv0 = "difftest";
    bool minimize = false;
    bool fixed_variant = false;  // --default-tile: default timing, data in L1, for every seed
    std::string dump_dir;
    uint32_t max_reports = 3;
};

const char* dut_name(const Config& c) {
    return c.dut == "tile" ? "core" : c.dut.c_str();
}

struct Outcome {
    Program prog;
    Image ref_img, dut_img;
    RunResult ref, dut;
    std::vector<Difference> diffs;
    bool passed() const { return ref.ok && dut.ok && diffs.empty(); }
};

// A deliberately broken "device" for the self-test: QEMU, but every sra/srai in the body turned
// into srl/srli, as a core with a broken arithmetic shift would execute them.
bool is_sra(uint32_t w) {
    uint32_t op = w & 0x7F, f3 = (w >> 12) & 7, f7 = w >> 25;
    return (op == 0x33 || op == 0x13) && f3 == 5 && f7 == 0x20;
}
void mutate_sra_to_srl(Program& p) {
    for (uint32_t& w : p.body)
        if (is_sra(w)) w &= ~(0x20u << 25);
}

// How the tile is set up for a seed: timing knobs and where the data lives. Architectural results
// must not depend on either. Drawn from their own stream so the program does not change.
struct TileVariant {
    TimingKnobs timing;
    bool ldm = false;
    std::string describe() const {
        return timing.describe() + (ldm ? ", data in local data RAM" : ", data in L1");
    }
};

TileVariant tile_variant(uint64_t seed, const Config& cfg) {
    TileVariant v;
    v.timing = cfg.tile.timing;
    if (cfg.fixed_variant) return v;
    Rng rng(seed ^ 0x5EEDC0DE7131A5A5ull);
    v.ldm = rng.chance(25);
    if (rng.chance(25)) return v;  // default timing
    static constexpr uint32_t kLoad[] = {1, 2, 3, 7, 12}, kStore[] = {1, 2, 5, 8},
                              kLdm[] = {1, 2, 4}, kDiv[] = {1, 2, 16, 35}, kBranch[] = {0, 1, 3};
    v.timing.l1_load_latency = kLoad[rng.below(5)];
    v.timing.l1_store_interval = kStore[rng.below(4)];
    v.timing.ldm_load_latency = kLdm[rng.below(3)];
    v.timing.div_latency = kDiv[rng.below(4)];
    v.timing.branch_penalty = kBranch[rng.below(3)];
    return v;
}

Outcome run_one(uint64_t seed, const Config& cfg, const GenOptions& gen = {}) {
    Outcome o;
    o.prog = generate(seed, gen);
    o.ref_img = build_image(o.prog, Platform::Qemu, kQemuLayout);
    o.ref = run_qemu(o.ref_img, cfg.qemu);
    if (cfg.dut == "tile") {
        TileVariant v = tile_variant(seed, cfg);
        TileOptions t = cfg.tile;
        t.timing = v.timing;
        o.dut_img = build_image(o.prog, Platform::Tile, v.ldm ? kTileLdmLayout : kTileLayout);
        o.dut = run_tile(o.dut_img, t);
    } else {
        Program moved = o.prog;
        if (cfg.dut == "qemu-mutant") mutate_sra_to_srl(moved);
        o.dut_img = build_image(moved, Platform::Qemu, kQemuAltLayout);
        o.dut = run_qemu(o.dut_img, cfg.qemu);
    }
    if (o.ref.ok && o.dut.ok) o.diffs = compare(o.prog, o.ref.signature, o.dut.signature);
    return o;
}

std::string hex32(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
}

// One line: what failed first.
std::string first_failure(const Outcome& o, const Config& cfg) {
    if (!o.ref.ok) return "reference failed: " + o.ref.error;
    if (!o.dut.ok) return std::string(dut_name(cfg)) + " failed: " + o.dut.error;
    if (!o.diffs.empty())
        return "first divergence: " + describe(o.prog, o.diffs.front(), "qemu", dut_name(cfg));
    return "identical";
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

void dump_files(const Outcome& o, const Config& cfg) {
    if (cfg.dump_dir.empty()) return;
    std::vector<uint8_t> body;
    for (uint32_t w : o.prog.body)
        for (int i = 0; i < 4; ++i) body.push_back(static_cast<uint8_t>(w >> (8 * i)));
    write_file(cfg.dump_dir + "/body.bin", body);
    write_file(cfg.dump_dir + "/qemu.bin", o.ref_img.bytes);
    write_file(cfg.dump_dir + "/dut.bin", o.dut_img.bytes);
    if (o.ref.ok) write_file(cfg.dump_dir + "/sig-qemu.bin", serialize_signature(o.ref.signature));
    if (o.dut.ok) write_file(cfg.dump_dir + "/sig-dut.bin", serialize_signature(o.dut.signature));
    std::ofstream(cfg.dump_dir + "/listing.txt")
        << disassemble(o.prog, cfg.objdump, cfg.qemu.tmpdir);
    std::printf(
        "wrote body.bin, qemu.bin (load at %s), dut.bin (load at %s), sig-*.bin, listing.txt to "
        "%s\n",
        hex32(o.ref_img.base).c_str(), hex32(o.dut_img.base).c_str(), cfg.dump_dir.c_str());
}

// Smallest number of units whose prefix program already diverges (binary search; the full
// program is known to diverge).
uint32_t minimize(uint64_t seed, const Config& cfg, uint32_t units) {
    uint32_t lo = 0, hi = units;  // prefix(lo) passes (assumed for 0), prefix(hi) fails
    GenOptions g;
    g.keep_units = 0;
    if (!run_one(seed, cfg, g).passed()) return 0;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        g.keep_units = mid;
        if (run_one(seed, cfg, g).passed())
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

void report(const Outcome& o, const Config& cfg, bool full, bool minimize_it) {
    const Program& p = o.prog;
    std::printf("\n=== DIVERGENCE seed %llu ===\n", static_cast<unsigned long long>(p.seed));
    std::printf("reference: %s (-M virt, rv32 c=false); dut: %s\n", cfg.qemu.qemu.c_str(),
                cfg.dut == "tile" ? "our RV32IM core (sim::Tile)" : cfg.dut.c_str());
    std::printf("%s\n", first_failure(o, cfg).c_str());
    if (!o.diffs.empty()) {
        std::printf("%zu difference(s):\n", o.diffs.size());
        for (size_t i = 0; i < o.diffs.size() && i < 24; ++i)
            std::printf("  %s\n", describe(o.prog, o.diffs[i], "qemu", dut_name(cfg)).c_str());
        if (o.diffs.size() > 24) std::printf("  ...\n");
    }
    if (cfg.dut == "tile")
        std::printf("tile variant for this seed: %s\n",
                    tile_variant(p.seed, cfg).describe().c_str());
    if (cfg.dut == "tile" && o.dut.ok)
        std::printf("core: %llu instructions retired in %llu cycles\n",
                    static_cast<unsigned long long>(o.dut.instret),
                    static_cast<unsigned long long>(o.dut.cycles));
    std::printf(
        "program: %u units, %zu blocks, %zu body words; x%u = code base, x%u = data base (region "
        "+%d), "
        "x%u = loop counter; data region (%u bytes) seeded from the same seed\n",
        p.units, p.blocks.size(), p.body.size(), p.code_reg, p.data_reg, kDataBaseOffset,
        p.loop_reg, kDataBytes);
    std::printf("body at %s on qemu, %s on the %s; register dump at data-base %d\n",
                hex32(o.ref_img.body_addr).c_str(), hex32(o.dut_img.body_addr).c_str(),
                dut_name(cfg), kSigRegOffset);
    std::printf("reproduce: %s --seed %llu --minimize --dump DIR\n", cfg.argv0.c_str(),
                static_cast<unsigned long long>(p.seed));
    if (!full) return;

    if (minimize_it) {
        uint32_t k = minimize(p.seed, cfg, p.units);
        GenOptions g;
        g.keep_units = k;
        Outcome m = run_one(p.seed, cfg, g);
        if (k == 0) {
            std::printf("\nminimized: the register-init prologue alone diverges: %s\n",
                        first_failure(m, cfg).c_str());
        } else {
            uint32_t first = UINT32_MAX, last = 0;
            for (const auto& b : m.prog.blocks) {
                if (b.unit != k - 1) continue;
                first = std::min(first, b.first_word);
                last = std::max(last, b.first_word + b.words);
            }
            std::printf("\nminimized: the first %u unit(s) pass; with unit %u added: %s\n", k - 1,
                        k - 1, first_failure(m, cfg).c_str());
            std::printf("unit %u (body +0x%x .. +0x%x):\n%s", k - 1, 4 * first, 4 * last,
                        disassemble(m.prog, cfg.objdump, cfg.qemu.tmpdir, first, last).c_str());
            std::printf("(reproduce the minimized program: %s --seed %llu --units %u)\n",
                        cfg.argv0.c_str(), static_cast<unsigned long long>(p.seed), k);
        }
    }
    std::printf("\ndisassembly (offsets from the body start):\n%s",
                disassemble(p, cfg.objdump, cfg.qemu.tmpdir).c_str());
    std::printf("=== end of report for seed %llu ===\n", static_cast<unsigned long long>(p.seed));
}

const char* const kAllMnemonics[] = {
    "add",  "sub",  "sll",   "slt",    "sltu",  "xor",  "srl",  "sra",  "or",
    "and",  "mul",  "mulh",  "mulhsu", "mulhu", "div",  "divu", "rem",  "remu",
    "addi", "slti", "sltiu", "xori",   "ori",   "andi", "slli", "srli", "srai",
    "lb",   "lbu",  "lh",    "lhu",    "lw",    "sb",   "sh",   "sw",   "beq",
    "bne",  "blt",  "bge",   "bltu",   "bgeu",  "jal",  "jalr", "lui",  "auipc"};

void print_histogram(const std::map<std::string, uint64_t>& h, uint64_t programs) {
    std::string line = "histogram (static, " + std::to_string(programs) + " programs):";
    for (const auto& [k, v] : h) line += " " + k + "=" + std::to_string(v);
    std::printf("%s\n", line.c_str());
    std::string missing;
    for (const char* m : kAllMnemonics)
        if (!h.count(m)) missing += std::string(" ") + m;
    if (!missing.empty()) std::printf("NOT COVERED:%s\n", missing.c_str());
}

int run_range(uint64_t first, uint64_t last, const Config& cfg) {
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    std::map<std::string, uint64_t> hist;
    uint64_t failures = 0, programs = 0, instret = 0, cycles = 0, body_words = 0;
    uint32_t reported = 0;
    std::vector<uint64_t> failed;
    for (uint64_t seed = first; seed < last; ++seed) {
        Outcome o = run_one(seed, cfg);
        ++programs;
        for (const auto& [k, v] : o.prog.histogram) hist[k] += v;
        body_words += o.prog.body.size();
        instret += o.dut.instret;
        cycles += o.dut.cycles;
        if (!o.passed()) {
            ++failures;
            failed.push_back(seed);
            std::printf("seed %llu: FAIL: %s\n", static_cast<unsigned long long>(seed),
                        first_failure(o, cfg).c_str());
            // Full reports for the first few; the first is also minimized.
            report(o, cfg, reported < cfg.max_reports, reported == 0 || cfg.minimize);
            ++reported;
            dump_files(o, cfg);
        }
        std::fflush(stdout);
    }
    double secs = std::chrono::duration<double>(clock::now() - t0).count();
    print_histogram(hist, programs);
    std::printf(
        "seeds %llu..%llu: %llu programs (%llu body words), %llu identical, %llu diverged; ",
        static_cast<unsigned long long>(first), static_cast<unsigned long long>(last - 1),
        static_cast<unsigned long long>(programs), static_cast<unsigned long long>(body_words),
        static_cast<unsigned long long>(programs - failures),
        static_cast<unsigned long long>(failures));
    if (cfg.dut == "tile")
        std::printf("core retired %llu instructions in %llu cycles; ",
                    static_cast<unsigned long long>(instret),
                    static_cast<unsigned long long>(cycles));
    std::printf("%.1f s\n", secs);
    if (!failed.empty()) {
        std::printf("failing seeds:");
        for (auto s : failed) std::printf(" %llu", static_cast<unsigned long long>(s));
        std::printf("\n");
    }
    return failures == 0 ? 0 : 1;
}

int run_seed(uint64_t seed, const Config& cfg, uint32_t units) {
    GenOptions g;
    if (units != UINT32_MAX) g.keep_units = units;
    Outcome o = run_one(seed, cfg, g);
    dump_files(o, cfg);
    if (o.passed()) {
        std::printf("seed %llu: identical (%u units, %zu body words",
                    static_cast<unsigned long long>(seed), o.prog.units, o.prog.body.size());
        if (cfg.dut == "tile")
            std::printf(", core: %llu instructions, %llu cycles",
                        static_cast<unsigned long long>(o.dut.instret),
                        static_cast<unsigned long long>(o.dut.cycles));
        std::printf(")\n");
        return 0;
    }
    report(o, cfg, true, cfg.minimize);
    return 1;
}

// The checker must be able to fail. Each check prints PASS/FAIL; any FAIL fails the run.
int selftest(const Config& cfg) {
    int bad = 0;
    auto check = [&](bool ok, const std::string& what) {
        std::printf("%s: %s\n", ok ? "PASS" : "FAIL", what.c_str());
        if (!ok) ++bad;
    };

    // 1. Determinism: same seed, same program.
    {
        Program a = generate(77), b = generate(77), c = generate(78);
        check(a.body == b.body && a.data_init == b.data_init,
              "generator is deterministic for a seed");
        check(a.body != c.body, "different seeds give different programs");
        GenOptions g;
        g.keep_units = 40;
        Program t = generate(77, g);
        bool prefix = t.blocks.size() > 0;
        uint32_t end = t.blocks.empty() ? 0 : t.blocks.back().first_word + t.blocks.back().words;
        // Branch words may be retargeted to the shortened end; everything else must match.
        uint32_t same = 0;
        for (uint32_t i = 0; i < end && i < a.body.size(); ++i) same += t.body[i] == a.body[i];
        check(prefix && same + 16 >= end, "a truncated program is a prefix of the full one (" +
                                              std::to_string(same) + "/" + std::to_string(end) +
                                              " words equal)");
    }

    // 1b. The encoder (tests/isa/rv_encode.h) agrees with binutils on every word the generator
    //     emits, and the generated programs use every RV32IM instruction that can be tested.
    {
        uint32_t words = 0, wrong = 0;
        std::set<std::string> seen;
        std::string example;
        for (uint64_t seed = 300; seed < 310; ++seed) {
            Program p = generate(seed);
            auto dis = objdump_mnemonics(p.body, cfg.objdump, cfg.qemu.tmpdir);
            for (size_t i = 0; i < p.body.size(); ++i) {
                std::string want = p.mnemonics[i];
                if (want == "junk") continue;
                if (want == "sw.trace") want = "sw";
                ++words;
                seen.insert(dis[i]);
                if (dis[i] != want) {
                    if (wrong++ == 0)
                        example = " (first: word " + hex32(p.body[i]) + " meant as " + want +
                                  ", objdump says " + dis[i] + ")";
                }
            }
        }
        check(wrong == 0, "objdump decodes all " + std::to_string(words) +
                              " generated words as intended" + example);
        std::string missing;
        for (const char* m : kAllMnemonics)
            if (!seen.count(m)) missing += std::string(" ") + m;
        check(missing.empty(), "10 programs use all " + std::to_string(std::size(kAllMnemonics)) +
                                   " RV32IM instructions" +
                                   (missing.empty() ? "" : ", missing:" + missing));
    }

    // 2. The comparator reports a corrupted byte at exactly its place, and a corrupted register.
    {
        Program p = generate(5);
        RunResult r = run_qemu(build_image(p, Platform::Qemu, kQemuLayout), cfg.qemu);
        check(r.ok, "reference runs seed 5" + (r.ok ? std::string() : ": " + r.error));
        if (r.ok) {
            check(compare(p, r.signature, r.signature).empty(),
                  "identical signatures compare equal");
            std::vector<uint8_t> raw = serialize_signature(r.signature);
            const uint32_t byte = kSigRegBytes + 0x1A7;  // data byte 0x1A7 -> word +0x1A4, lane 3
            raw[byte] ^= 0x40;
            Signature bad_sig = parse_signature(raw);
            auto d = compare(p, r.signature, bad_sig);
            bool exact = d.size() == 1 && d[0].where == Difference::Data && d[0].index == 0x1A4 &&
                         (d[0].a ^ d[0].b) == 0x40000000u;
            check(
                exact,
                "one flipped data bit is reported as the only divergence, at word +0x1a4 lane 3: " +
                    (d.empty() ? std::string("none") : describe(p, d[0], "ref", "corrupt")));
            uint32_t reg = 1;
            while (p.reserved(reg)) ++reg;
            Signature bad_reg = r.signature;
            bad_reg.regs[reg] += 1;
            bad_reg.data[kDataBytes - 1] ^= 1;
            d = compare(p, r.signature, bad_reg);
            check(d.size() == 2 && d[0].where == Difference::Reg && d[0].index == reg &&
                      d[1].where == Difference::Data && d[1].index == kDataBytes - 4,
                  "register differences come before data: " +
                      (d.empty() ? std::string("none") : describe(p, d[0], "ref", "corrupt")));
            // A trace slot names the block that stored it, and comes first.
            const Block* traced = nullptr;
            size_t traced_index = 0;
            for (size_t i = 0; i < p.blocks.size() && !traced; ++i)
                if (p.blocks[i].trace_slot >= 0) traced = &p.blocks[traced_index = i];
            if (traced) {
                bad_reg.trace[4 * traced->trace_slot] ^= 0x80;
                d = compare(p, r.signature, bad_reg);
                std::string text =
                    d.empty() ? std::string("none") : describe(p, d[0], "ref", "corrupt");
                check(d.size() == 3 && d[0].where == Difference::Trace &&
                          d[0].index == static_cast<uint32_t>(traced->trace_slot) &&
                          text.find("block " + std::to_string(traced_index) + " ") !=
                              std::string::npos,
                      "a trace difference comes first and names its block: " + text);
            }
            Signature base_only = r.signature;
            base_only.regs[p.code_reg] ^= 0xFFFF;
            check(compare(p, r.signature, base_only).empty(),
                  "the base registers are not part of the signature");
        }
    }

    // 3. Position independence: the same body at different code/data addresses gives the same
    //    signature on the reference (otherwise the core would be blamed for generator bugs).
    {
        uint32_t same = 0, n = 12;
        for (uint64_t seed = 1000; seed < 1000 + n; ++seed) {
            Program p = generate(seed);
            RunResult a = run_qemu(build_image(p, Platform::Qemu, kQemuLayout), cfg.qemu);
            RunResult b = run_qemu(build_image(p, Platform::Qemu, kQemuAltLayout), cfg.qemu);
            if (a.ok && b.ok && compare(p, a.signature, b.signature).empty())
                ++same;
            else
                std::printf("  seed %llu: %s / %s\n", static_cast<unsigned long long>(seed),
                            a.error.c_str(), b.error.c_str());
        }
        check(same == n, "bodies are position independent on the reference (" +
                             std::to_string(same) + "/" + std::to_string(n) +
                             " seeds identical at two layouts)");
    }

    // 4. End to end: a wrong instruction on the device side is caught. Replace the dump of one
    //    register holding a nonzero value with a dump of x0 in the device's image only.
    if (cfg.dut == "tile") {
        Program p = generate(9);
        Image ref_img = build_image(p, Platform::Qemu, kQemuLayout);
        RunResult r = run_qemu(ref_img, cfg.qemu);
        uint32_t reg = 0;
        for (uint32_t x = 1; x < 32 && r.ok; ++x)
            if (!p.reserved(x) && r.signature.regs[x] != 0) {
                reg = x;
                break;
            }
        check(reg != 0, "seed 9 leaves a nonzero register on the reference");
        if (reg != 0) {
            Program mutated = p;
            // The dump is the last 30 words of the body, one sw per non-reserved register in order.
            uint32_t idx = static_cast<uint32_t>(mutated.body.size()) - 30;
            for (uint32_t x = 0; x < reg; ++x) idx += p.reserved(x) ? 0 : 1;
            mutated.body[idx] &= ~(0x1Fu << 20);  // rs2 := x0
            RunResult d = run_tile(build_image(mutated, Platform::Tile, kTileLayout), cfg.tile);
            auto diffs = d.ok ? compare(p, r.signature, d.signature) : std::vector<Difference>{};
            check(d.ok && diffs.size() == 1 && diffs[0].where == Difference::Reg &&
                      diffs[0].index == reg && diffs[0].b == 0,
                  "a mutated instruction on the core is caught at x" + std::to_string(reg) + ": " +
                      (d.ok ? (diffs.empty() ? std::string("no divergence")
                                             : describe(p, diffs[0], "qemu", "core"))
                            : d.error));
        }
    }

    // 5. The QEMU runner turns a hang into a failure instead of waiting forever.
    {
        Program p = generate(3);
        Image img = build_image(p, Platform::Qemu, kQemuLayout);
        // Make the first body word a jump to itself.
        uint32_t off = img.body_addr - img.base;
        const uint32_t self_loop = 0x0000006F;  // jal x0, 0
        for (int i = 0; i < 4; ++i) img.bytes[off + i] = static_cast<uint8_t>(self_loop >> (8 * i));
        QemuOptions q = cfg.qemu;
        q.timeout_s = 1.0;
        RunResult r = run_qemu(img, q);
        check(!r.ok && r.error.find("timed out") != std::string::npos,
              "a hanging reference run is reported: " + r.error);
    }

    // 6. A known-bad device (sra executed as srl) is caught within a few seeds, and the minimizer
    //    blames a unit that contains an arithmetic shift.
    {
        Config m = cfg;
        m.dut = "qemu-mutant";
        uint64_t seed = 0;
        bool caught = false;
        for (; seed < 10 && !caught; ++seed) caught = !run_one(seed, m).passed();
        check(caught, "a device that executes sra as srl is caught (seed " +
                          std::to_string(seed - 1) + ")");
        if (caught) {
            Program p = generate(seed - 1);
            uint32_t k = minimize(seed - 1, m, p.units);
            bool has_sra = false;
            for (const auto& blk : p.blocks)
                if (k > 0 && blk.unit == k - 1)
                    for (uint32_t i = 0; i < blk.words; ++i)
                        has_sra |= is_sra(p.body[blk.first_word + i]);
            check(has_sra, "the minimizer blames unit " + std::to_string(k == 0 ? 0 : k - 1) +
                               ", which contains an sra/srai");
        }
    }

    std::printf("selftest: %s\n", bad ? "FAILED" : "passed");
    return bad ? 1 : 0;
}

int usage(const char* msg) {
    std::fprintf(stderr,
                 "difftest: %s\nusage: difftest (--seeds A:B | --seed N [--units K] [--minimize] | "
                 "--selftest)\n"
                 "  [--qemu PATH] [--objdump PATH] [--tmpdir DIR] [--timeout S] [--cycles N]\n"
                 "  [--dut tile|qemu-alt|qemu-mutant] [--default-tile] [--dump DIR] [--fst FILE] "
                 "[--max-reports N]\n",
                 msg);
    return 2;
}

}  // namespace
}  // namespace difftest

int main(int argc, char** argv) {
    using namespace difftest;
    Config cfg;
    cfg.qemu.qemu = DIFFTEST_QEMU;
    cfg.argv0 = argv[0];
    if (const char* t = std::getenv("TMPDIR")) cfg.qemu.tmpdir = t;
    enum { None, Range, Seed, Self } mode = None;
    uint64_t a = 0, b = 0;
    uint32_t units = UINT32_MAX;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
            return argv[++i];
        };
        try {
            if (arg == "--seeds") {
                std::string v = val();
                auto colon = v.find(':');
                if (colon == std::string::npos) return usage("--seeds takes A:B");
                a = std::stoull(v.substr(0, colon));
                b = std::stoull(v.substr(colon + 1));
                if (b <= a) return usage("--seeds A:B needs B > A");
                mode = Range;
            } else if (arg == "--seed") {
                a = std::stoull(val());
                mode = Seed;
            } else if (arg == "--selftest") {
                mode = Self;
            } else if (arg == "--units") {
                units = static_cast<uint32_t>(std::stoul(val()));
            } else if (arg == "--default-tile") {
                cfg.fixed_variant = true;
            } else if (arg == "--minimize") {
                cfg.minimize = true;
            } else if (arg == "--qemu") {
                cfg.qemu.qemu = val();
            } else if (arg == "--objdump") {
                cfg.objdump = val();
            } else if (arg == "--tmpdir") {
                cfg.qemu.tmpdir = val();
            } else if (arg == "--timeout") {
                cfg.qemu.timeout_s = std::stod(val());
            } else if (arg == "--cycles") {
                cfg.tile.cycle_budget = std::stoull(val());
            } else if (arg == "--dut") {
                cfg.dut = val();
                if (cfg.dut != "tile" && cfg.dut != "qemu-alt" && cfg.dut != "qemu-mutant")
                    return usage("--dut is tile, qemu-alt or qemu-mutant");
            } else if (arg == "--fst") {
                cfg.tile.fst_path = val();
            } else if (arg == "--dump") {
                cfg.dump_dir = val();
            } else if (arg == "--max-reports") {
                cfg.max_reports = static_cast<uint32_t>(std::stoul(val()));
            } else {
                return usage(("unknown argument " + arg).c_str());
            }
        } catch (const std::invalid_argument& e) {
            return usage(e.what());
        } catch (const std::out_of_range&) {
            return usage(("value out of range for " + arg).c_str());
        }
    }
    if (!cfg.tile.fst_path.empty() && mode != Seed) return usage("--fst goes with --seed");
    try {
        switch (mode) {
            case Range:
                return run_range(a, b, cfg);
            case Seed:
                return run_seed(a, cfg, units);
            case Self:
                return selftest(cfg);
            default:
                return usage("choose --seeds, --seed or --selftest");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "difftest: error: %s\n", e.what());
        return 1;
    }
}
