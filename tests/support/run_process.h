// Running a program (fabricctl) as a child process for end-to-end tests: its exit code and what it
// wrote to stdout and stderr, captured through files in `tmp_dir`.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
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
inline std::string temp_path(const std::string& dir, const std::string& stem, const std::string& ext = "") {
    static TempFiles files;
    return files.add(unique_path(dir, stem) + ext);
}

// Run `program` with `args`; throws std::runtime_error if it cannot be started.
inline Run run_process(const std::string& program, const std::vector<std::string>& args,
                       const std::string& tmp_dir) {
    const std::string out_path = unique_path(tmp_dir, "stdout");
    const std::string err_path = unique_path(tmp_dir, "stderr");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv_s{program};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start " + program);
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) throw std::runtime_error("waitpid failed for " + program);
    Run r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return r;
}

}  // namespace fabric::test
