// Running a program (fabricctl) as a child process for end-to-end tests: its exit code and what it
// wrote to stdout and stderr, captured through files in `tmp_dir`.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fabric::test {

struct Run {
    int code = -1;  // exit status, or 128 + signal
    std::string out;
    std::string err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// A fresh file name in `dir`, unique within this process and across processes.
inline std::string unique_path(const std::string& dir, const std::string& stem) {
    static int counter = 0;
    return dir + "/" + stem + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

// A fresh file name in `dir` (stem, unique suffix, `ext`) for a file a test writes: descriptors,
// ELFs. Removed when the test binary exits, so repeated runs leave nothing in the build tree.
class TempFiles {
  public:
    TempFiles() = default;
    TempFiles(const TempFiles&) = delete;
    TempFiles& operator=(const TempFiles&) = delete;
    ~TempFiles() {
        for (const std::string& p : paths_) {
            std::error_code ec;
            std::filesystem::remove(p, ec);
        }
    }
    const std::string& add(std::string path) { return paths_.emplace_back(std::move(path)); }

  private:
    std::vector<std::string> paths_;
};
inline std::string temp_path(const std::string& dir, const std::string& stem,
                             const std::string& ext = "") {
    static TempFiles files;
    return files.add(unique_path(dir, stem) + ext);
}

// A signal sent to the child `after` its start (run_process_signalled).
struct SignalAfter {
    int signal = SIGINT;
    std::chrono::milliseconds after{0};
};

struct SignalledRun : Run {
    double seconds_to_exit = 0;  // from the signal to the child's exit
};

// A child started with its stdout and stderr going to files.
struct Spawned {
    pid_t pid = 0;
    std::string out_path, err_path;
    bool capture_out = true;
};

inline Spawned spawn_process(const std::string& program, const std::vector<std::string>& args,
                             const std::string& tmp_dir, const std::string& stdout_to) {
    Spawned sp;
    sp.capture_out = stdout_to.empty();
    sp.out_path = sp.capture_out ? unique_path(tmp_dir, "stdout") : stdout_to;
    sp.err_path = unique_path(tmp_dir, "stderr");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, sp.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, 2, sp.err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    std::vector<std::string> argv_s{program};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&sp.pid, program.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + program);
    return sp;
}

inline Run collect_process(const Spawned& sp) {
    int status = 0;
    if (::waitpid(sp.pid, &status, 0) != sp.pid) throw std::runtime_error("waitpid failed");
    Run r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (sp.capture_out) {
        r.out = slurp(sp.out_path);
        std::filesystem::remove(sp.out_path);
    }
    r.err = slurp(sp.err_path);
    std::filesystem::remove(sp.err_path);
    return r;
}

// Run `program` with `args`; throws std::runtime_error if it cannot be started. `stdout_to`
// (e.g. "/dev/full") replaces the captured stdout: `out` is then empty.
inline Run run_process(const std::string& program, const std::vector<std::string>& args,
                       const std::string& tmp_dir, const std::string& stdout_to = "") {
    return collect_process(spawn_process(program, args, tmp_dir, stdout_to));
}

// Run `program`, send it `sig.signal` after `sig.after`, and wait for it.
inline SignalledRun run_process_signalled(const std::string& program,
                                          const std::vector<std::string>& args,
                                          const std::string& tmp_dir, const SignalAfter& sig) {
    const Spawned sp = spawn_process(program, args, tmp_dir, "");
    std::this_thread::sleep_for(sig.after);
    const auto sent = std::chrono::steady_clock::now();
    ::kill(sp.pid, sig.signal);
    SignalledRun r;
    static_cast<Run&>(r) = collect_process(sp);
    r.seconds_to_exit =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
    return r;
}

}  // namespace fabric::test
