// Run a piece of host code in a child process under an address-space cap (RLIMIT_AS) and report
// how much memory it took (its peak resident set, getrusage): for tests that an input cannot make
// a loader allocate without bound. The child's outcome is one line: "ok", "error: <message>" for a
// fabric::Error, or what else went wrong ("bad_alloc", "exception: ...", "killed by signal N").
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include "fabric/error.h"

namespace fabric::test {

struct CappedRun {
    std::string outcome;
    uint64_t start_rss_bytes = 0;  // resident when the child started (inherited pages included)
    uint64_t peak_rss_bytes = 0;   // the child's peak
    uint64_t growth_bytes() const { return peak_rss_bytes - start_rss_bytes; }
};

// Resident set of this process now, from /proc/self/statm.
inline uint64_t current_rss_bytes() {
    unsigned long pages_total = 0, pages_resident = 0;
    if (FILE* f = std::fopen("/proc/self/statm", "r")) {
        if (std::fscanf(f, "%lu %lu", &pages_total, &pages_resident) != 2) pages_resident = 0;
        std::fclose(f);
    }
    return uint64_t(pages_resident) * uint64_t(::sysconf(_SC_PAGESIZE));
}

template <typename F>
CappedRun run_with_memory_cap(uint64_t cap_bytes, F&& f) {
    int fds[2];
    if (::pipe(fds) != 0) return {"pipe failed", 0, 0};
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        const uint64_t start_rss = current_rss_bytes();
        const rlimit cap{cap_bytes, cap_bytes};
        ::setrlimit(RLIMIT_AS, &cap);
        std::string outcome = "ok";
        try {
            f();
        } catch (const fabric::Error& e) {
            outcome = std::string("error: ") + e.what();
        } catch (const std::bad_alloc&) {
            outcome = "bad_alloc";
        } catch (const std::exception& e) {
            outcome = std::string("exception: ") + e.what();
        }
        rusage usage{};
        ::getrusage(RUSAGE_SELF, &usage);
        const std::string report = std::to_string(start_rss) + " " +
                                   std::to_string(uint64_t(usage.ru_maxrss) * 1024) + " " + outcome;
        const ssize_t written = ::write(fds[1], report.data(), report.size());
        ::_exit(written == static_cast<ssize_t>(report.size()) ? 0 : 1);
    }
    ::close(fds[1]);
    std::string report;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, size_t(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) return {"killed by signal " + std::to_string(WTERMSIG(status)), 0, 0};
    const size_t first = report.find(' ');
    const size_t second = first == std::string::npos ? first : report.find(' ', first + 1);
    if (second == std::string::npos) return {"no report from the child", 0, 0};
    return {report.substr(second + 1), std::stoull(report.substr(0, first)),
            std::stoull(report.substr(first + 1, second - first - 1))};
}

}  // namespace fabric::test
