// A seeded mutation driver for the fuzz targets, for builds without libFuzzer (the default g++
// build, so ctest runs every target for a bounded time). Deterministic: the same seed, corpus and
// iteration count give the same inputs. It mutates corpus files (and the target's built-in seeds)
// with byte, token and line edits, keeps inputs the loader accepts as further starting points, and
// fails on anything but acceptance or a fabric::Error:
//   another exception            "exception: <what>"
//   std::bad_alloc               an allocation above --memory-mb (RLIMIT_AS; not under ASan)
//   a crash (SIGSEGV, SIGABRT..) caught by a signal handler
//   a hang                       an input running longer than --timeout-ms (SIGALRM)
// The failing input is written to --crash-dir; `<target> --run FILE` replays one input.
//
//   fuzz_cluster_descriptor [--iterations N] [--seed S] [--max-len B] [--timeout-ms T]
//                           [--memory-mb M] [--time-budget-s S] [--crash-dir D] CORPUS...
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "fuzz_target.h"

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_UNDER_ASAN 1
#endif
#endif

namespace {

namespace fs = std::filesystem;

struct Options {
    uint64_t iterations = 10'000;
    uint64_t seed = 1;
    size_t max_len = 1u << 20;
    uint32_t timeout_ms = 5'000;
    uint64_t memory_mb = 2'048;
    double time_budget_s = 0;  // 0: none
    std::string crash_dir = ".";
    std::string run_one;  // --run FILE
    std::vector<std::string> corpus;
};

[[noreturn]] void usage(const char* argv0, const std::string& problem) {
    std::fprintf(stderr,
                 "%s: %s\nusage: %s [--iterations N] [--seed S] [--max-len BYTES] "
                 "[--timeout-ms T] [--memory-mb M] [--time-budget-s S] [--crash-dir DIR] "
                 "[--run FILE] CORPUS_FILE_OR_DIR...\n",
                 argv0, problem.c_str(), argv0);
    std::exit(2);
}

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(argv[0], arg + " needs a value");
            return argv[++i];
        };
        const auto number = [&]() -> uint64_t {
            const std::string v = value();
            char* end = nullptr;
            const uint64_t n = std::strtoull(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0') usage(argv[0], arg + " " + v + ": not a number");
            return n;
        };
        if (arg == "--iterations") {
            o.iterations = number();
        } else if (arg == "--seed") {
            o.seed = number();
        } else if (arg == "--max-len") {
            o.max_len = number();
        } else if (arg == "--timeout-ms") {
            o.timeout_ms = static_cast<uint32_t>(number());
        } else if (arg == "--memory-mb") {
            o.memory_mb = number();
        } else if (arg == "--time-budget-s") {
            o.time_budget_s = static_cast<double>(number());
        } else if (arg == "--crash-dir") {
            o.crash_dir = value();
        } else if (arg == "--run") {
            o.run_one = value();
        } else if (!arg.empty() && arg[0] == '-') {
            usage(argv[0], "unknown option " + arg);
        } else {
            o.corpus.push_back(arg);
        }
    }
    return o;
}

// ---- failures: the input is saved, also from a signal handler -----------------------------------

const uint8_t* g_input = nullptr;
size_t g_input_size = 0;
char g_crash_path[4096] = {};

// Async-signal-safe: only write(2) and friends.
void save_input_raw() {
    const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    size_t done = 0;
    while (done < g_input_size) {
        const ssize_t n = ::write(fd, g_input + done, g_input_size - done);
        if (n <= 0) break;
        done += static_cast<size_t>(n);
    }
    ::close(fd);
}

void say(const char* text) {
    const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
    (void)ignored;
}

void on_signal(int sig) {
    save_input_raw();
    say(sig == SIGALRM ? "fuzz: FAILED: the input ran past --timeout-ms (a hang)"
                       : "fuzz: FAILED: the target crashed (signal ");
    if (sig != SIGALRM) {
        char num[16];
        int len = 0;
        for (int v = sig; v > 0 && len < 15; v /= 10) num[len++] = static_cast<char>('0' + v % 10);
        for (int k = len - 1; k >= 0; --k) {
            const ssize_t ignored = ::write(STDERR_FILENO, &num[k], 1);
            (void)ignored;
        }
        say(")");
    }
    say("; input saved to ");
    say(g_crash_path);
    say("\n");
    ::_exit(1);
}

void install_handlers() {
    static std::vector<char> alt_stack(1 << 16);  // a stack overflow must still be reported
    stack_t ss{};
    ss.ss_sp = alt_stack.data();
    ss.ss_size = alt_stack.size();
    ::sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK;
    for (const int sig : {SIGALRM, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) {
        ::sigaction(sig, &sa, nullptr);
    }
}

void arm_timer(uint32_t ms) {
    itimerval t{};
    t.it_value.tv_sec = ms / 1000;
    t.it_value.tv_usec = static_cast<suseconds_t>(ms % 1000) * 1000;
    ::setitimer(ITIMER_REAL, &t, nullptr);
}

// Runs one input; returns the failure, or "" when the loader accepted or refused it properly.
std::string run_input(const std::string& input, const Options& o) {
    g_input = reinterpret_cast<const uint8_t*>(input.data());
    g_input_size = input.size();
    arm_timer(o.timeout_ms);
    std::string failure;
    try {
        LLVMFuzzerTestOneInput(g_input, g_input_size);
    } catch (const std::bad_alloc&) {
        failure = "an allocation above the memory cap (std::bad_alloc)";
    } catch (const std::exception& e) {
        failure = std::string("exception: ") + e.what();
    } catch (...) {
        failure = "an exception that is not a std::exception";
    }
    arm_timer(0);
    return failure;
}

// ---- inputs ------------------------------------------------------------------------------------

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> load_corpus(const Options& o) {
    std::vector<fs::path> files;
    for (const auto& entry : o.corpus) {
        std::error_code ec;
        if (fs::is_directory(entry, ec)) {
            for (const auto& f : fs::recursive_directory_iterator(entry, ec)) {
                if (f.is_regular_file(ec)) files.push_back(f.path());
            }
        } else if (fs::is_regular_file(entry, ec)) {
            files.emplace_back(entry);
        } else {
            std::fprintf(stderr, "fuzz: note: corpus %s does not exist, skipped\n", entry.c_str());
        }
    }
    std::sort(files.begin(), files.end());  // the same order on every machine
    std::vector<std::string> corpus;
    for (const auto& f : files) {
        std::string bytes = read_file(f);
        if (bytes.size() <= o.max_len) corpus.push_back(std::move(bytes));
    }
    for (auto& s : fabric::fuzz::builtin_seeds()) corpus.push_back(std::move(s));
    return corpus;
}

// ---- mutations ---------------------------------------------------------------------------------

class Mutator {
  public:
    Mutator(uint64_t seed, std::vector<std::string> dictionary)
        : rng_(seed), dictionary_(std::move(dictionary)) {}

    // 1 to 5 edits of `input`, at most max_len bytes; `pool` supplies splices.
    std::string mutate(std::string input, const std::vector<std::string>& pool, size_t max_len) {
        const uint64_t edits = 1 + below(5);
        for (uint64_t k = 0; k < edits; ++k) edit(input, pool);
        if (input.size() > max_len) input.resize(max_len);
        return input;
    }

    uint64_t below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }

  private:
    // A position in s: a third of the time near the start and a third near the end, where the
    // headers and tables of binary formats are (and the top keys of a text file).
    size_t pos(const std::string& s) {
        constexpr size_t kEdge = 512;
        const size_t n = s.size();
        switch (below(3)) {
            case 0:
                return static_cast<size_t>(below(std::min(n, kEdge) + 1));
            case 1:
                return n - static_cast<size_t>(below(std::min(n, kEdge) + 1));
            default:
                return static_cast<size_t>(below(n + 1));
        }
    }
    // An existing byte of a non-empty s.
    size_t byte_at(const std::string& s) { return std::min(pos(s), s.size() - 1); }

    // [begin, end) of the line around `at`.
    static std::pair<size_t, size_t> line_at(const std::string& s, size_t at) {
        const size_t b = at == 0 ? 0 : s.rfind('\n', at - 1);
        const size_t begin = b == std::string::npos ? 0 : (at == 0 ? 0 : b + 1);
        const size_t e = s.find('\n', at);
        return {begin, e == std::string::npos ? s.size() : e + 1};
    }

    void edit(std::string& s, const std::vector<std::string>& pool) {
        static const char* const kNumbers[] = {"0",
                                               "1",
                                               "2",
                                               "15",
                                               "16",
                                               "64",
                                               "65",
                                               "255",
                                               "256",
                                               "4096",
                                               "65535",
                                               "65536",
                                               "2147483648",
                                               "4294967295",
                                               "4294967296",
                                               "18446744073709551615",
                                               "99999999999999999999",
                                               "-1",
                                               "0x7fffffff"};
        switch (below(12)) {
            case 0:  // flip a bit
                if (!s.empty()) s[byte_at(s)] ^= static_cast<char>(1u << below(8));
                break;
            case 1:  // set a byte
                if (!s.empty()) s[byte_at(s)] = static_cast<char>(below(256));
                break;
            case 2:  // insert bytes
                s.insert(pos(s), 1 + below(4), static_cast<char>(below(256)));
                break;
            case 3: {  // erase a range
                if (s.empty()) break;
                const size_t at = below(s.size());
                s.erase(at, 1 + below(std::min<uint64_t>(64, s.size() - at)));
                break;
            }
            case 4: {  // copy a range elsewhere
                if (s.empty()) break;
                const size_t at = below(s.size());
                const std::string chunk = s.substr(at, 1 + below(64));
                s.insert(pos(s), chunk);
                break;
            }
            case 5:  // a dictionary token
                if (!dictionary_.empty()) s.insert(pos(s), dictionary_[below(dictionary_.size())]);
                break;
            case 6: {  // splice in a piece of another input
                if (pool.empty()) break;
                const std::string& other = pool[below(pool.size())];
                if (other.empty()) break;
                const size_t at = below(other.size());
                s.insert(pos(s), other.substr(at, 1 + below(256)));
                break;
            }
            case 7: {  // a number at the edge of a range, over a run of digits (or anywhere)
                const std::string n = kNumbers[below(std::size(kNumbers))];
                const size_t digit = s.find_first_of("0123456789", pos(s));
                if (digit == std::string::npos) {
                    s.insert(pos(s), n);
                    break;
                }
                const size_t end = s.find_first_not_of("0123456789", digit);
                s.replace(digit, (end == std::string::npos ? s.size() : end) - digit, n);
                break;
            }
            case 8: {  // a 32-bit value at the edge, little-endian (binary formats)
                if (s.size() < 4) break;
                static const uint32_t kWords[] = {0,          1,          0x7f,      0x80,
                                                  0xff,       0xffff,     0x10000,   0x7fffffff,
                                                  0x80000000, 0xfffffff0, 0xffffffff};
                const uint32_t w = kWords[below(std::size(kWords))];
                const size_t at = std::min(pos(s), s.size() - 4) & ~size_t{1};
                for (int b = 0; b < 4; ++b) s[at + b] = static_cast<char>(w >> (8 * b));
                break;
            }
            case 9: {  // repeat a line (duplicate keys, duplicate entries)
                if (s.empty()) break;
                const auto [b, e] = line_at(s, below(s.size()));
                const std::string line = s.substr(b, e - b);
                s.insert(e, line);
                break;
            }
            case 10: {  // drop a line
                if (s.empty()) break;
                const auto [b, e] = line_at(s, below(s.size()));
                s.erase(b, e - b);
                break;
            }
            default: {  // a long run of one token (nesting, sizes)
                const std::string unit = below(2) ? std::string(1, "[{-&*:"[below(6)])
                                                  : s.substr(below(s.size() + 1), 1 + below(8));
                std::string run;
                for (uint64_t k = 0, n = 1 + below(4096); k < n && run.size() < 65536; ++k)
                    run += unit;
                s.insert(pos(s), run);
                break;
            }
        }
    }

    std::mt19937_64 rng_;
    std::vector<std::string> dictionary_;
};

void set_memory_cap(uint64_t mb) {
#ifdef FUZZ_UNDER_ASAN
    (void)mb;
    std::fprintf(stderr,
                 "fuzz: note: under ASan, no RLIMIT_AS cap (ASan reserves address space)\n");
#else
    const rlimit cap{mb << 20, mb << 20};
    if (::setrlimit(RLIMIT_AS, &cap) != 0) std::perror("fuzz: setrlimit(RLIMIT_AS)");
#endif
}

std::string target_name(const char* argv0) {
    return fs::path(argv0).filename().string();
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_options(argc, argv);
    const std::string name = target_name(argv[0]);
    std::snprintf(g_crash_path, sizeof g_crash_path, "%s/%s-crash.bin", o.crash_dir.c_str(),
                  name.c_str());
    install_handlers();
    set_memory_cap(o.memory_mb);

    if (!o.run_one.empty()) {
        const std::string input = read_file(o.run_one);
        const std::string failure = run_input(input, o);
        std::fprintf(stderr, "fuzz %s: %s: %s\n", name.c_str(), o.run_one.c_str(),
                     failure.empty() ? (fabric::fuzz::g_last_accepted ? "accepted" : "refused")
                                     : failure.c_str());
        return failure.empty() ? 0 : 1;
    }

    std::vector<std::string> pool = load_corpus(o);
    if (pool.empty()) usage(argv[0], "no corpus input (give files or directories)");
    const size_t seeds = pool.size();
    constexpr size_t kMaxPool = 512;  // accepted mutants kept as starting points
    Mutator mutator(o.seed, fabric::fuzz::dictionary());
    const auto start = std::chrono::steady_clock::now();
    uint64_t accepted = 0, done = 0;
    size_t next_slot = seeds;
    for (; done < o.iterations; ++done) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (o.time_budget_s > 0 && elapsed > o.time_budget_s) break;
        // Every seed once as it is, then mutants of the pool.
        std::string input = done < seeds
                                ? pool[done]
                                : mutator.mutate(pool[mutator.below(pool.size())], pool, o.max_len);
        const std::string failure = run_input(input, o);
        if (!failure.empty()) {
            save_input_raw();
            std::fprintf(stderr,
                         "fuzz %s: FAILED at input %llu (seed %llu): %s; input saved to %s\n",
                         name.c_str(), static_cast<unsigned long long>(done),
                         static_cast<unsigned long long>(o.seed), failure.c_str(), g_crash_path);
            return 1;
        }
        if (!fabric::fuzz::g_last_accepted) continue;
        ++accepted;
        if (done < seeds) continue;
        if (pool.size() < kMaxPool) {
            pool.push_back(std::move(input));
        } else {  // replace the mutants round-robin, never the seeds
            pool[next_slot] = std::move(input);
            next_slot = next_slot + 1 < kMaxPool ? next_slot + 1 : seeds;
        }
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "fuzz %s: %llu inputs (%llu accepted, %llu refused) in %.1f s from %zu seeds, "
        "seed %llu%s: no failure\n",
        name.c_str(), static_cast<unsigned long long>(done),
        static_cast<unsigned long long>(accepted), static_cast<unsigned long long>(done - accepted),
        seconds, seeds, static_cast<unsigned long long>(o.seed),
        done < o.iterations ? " (time budget reached)" : "");
    return 0;
}
