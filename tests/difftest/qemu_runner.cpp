#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "runners.h"

namespace difftest {

namespace {

// A temporary file that removes itself.
class TempFile {
  public:
    TempFile(const std::string& dir, const std::vector<uint8_t>& bytes) {
        std::string tmpl = dir + "/difftest-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        int fd = mkstemp(buf.data());
        if (fd < 0) throw std::runtime_error("mkstemp in " + dir + ": " + std::strerror(errno));
        path_ = buf.data();
        size_t done = 0;
        while (done < bytes.size()) {
            ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
            if (n <= 0) {
                ::close(fd);
                throw std::runtime_error("write " + path_ + ": " + std::strerror(errno));
            }
            done += static_cast<size_t>(n);
        }
        ::close(fd);
    }
    ~TempFile() { ::unlink(path_.c_str()); }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    const std::string& path() const { return path_; }

  private:
    std::string path_;
};

std::string hex(uint32_t v) {
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", v);
    return b;
}

}  // namespace

Capture run_command(const std::vector<std::string>& argv, double timeout_s) {
    Capture cap;
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    if (pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);

    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        dup2(out_pipe[1], 1);
        dup2(err_pipe[1], 2);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        execvp(args[0], args.data());
        _exit(127);
    }
    close(out_pipe[1]);
    close(err_pipe[1]);

    using clock = std::chrono::steady_clock;
    const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s);
    bool timed_out = false;
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_fds = 2;
    char buf[4096];
    while (open_fds > 0) {
        auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        int n = poll(fds, 2, static_cast<int>(left));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t r = read(fds[i].fd, buf, sizeof buf);
            if (r > 0) {
                if (i == 0)
                    cap.out.insert(cap.out.end(), buf, buf + r);
                else
                    cap.err.append(buf, static_cast<size_t>(r));
            } else if (r == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
            }
        }
    }
    if (timed_out) kill(pid, SIGKILL);  // our own child, by pid
    for (auto& f : fds)
        if (f.fd >= 0) close(f.fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out)
        cap.exit_status = -1;
    else if (WIFEXITED(status))
        cap.exit_status = WEXITSTATUS(status) == 127 ? -2 : WEXITSTATUS(status);
    else
        cap.exit_status = 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return cap;
}

RunResult run_qemu(const Image& img, const QemuOptions& opt) {
    RunResult res;
    TempFile file(opt.tmpdir, img.bytes);
    char loader[512];
    std::snprintf(loader, sizeof loader, "loader,file=%s,addr=0x%08x,force-raw=on",
                  file.path().c_str(), img.base);
    // c=false: our core has no compressed instructions, so a 2-byte-aligned jump target must trap
    // on the reference too.
    std::vector<std::string> argv = {opt.qemu, "-M",          "virt",     "-cpu", "rv32,c=false",
                                     "-smp",   "1",           "-m",       "32M",  "-bios",
                                     "none",   "-nodefaults", "-display", "none", "-serial",
                                     "stdio",  "-device",     loader};
    Capture cap = run_command(argv, opt.timeout_s);
    if (cap.exit_status == -2) {
        res.error = "could not start " + opt.qemu;
        return res;
    }
    if (cap.exit_status == -1) {
        res.error = "qemu timed out after " + std::to_string(opt.timeout_s) + " s (" +
                    std::to_string(cap.out.size()) + " bytes of output)";
        return res;
    }
    if (cap.exit_status == kQemuTrapExitCode && cap.out.size() >= 6 &&
        cap.out[cap.out.size() - 6] == 'T') {
        const uint8_t* t = cap.out.data() + cap.out.size() - 5;
        uint32_t mepc = t[1] | t[2] << 8 | t[3] << 16 | static_cast<uint32_t>(t[4]) << 24;
        res.error = "qemu trapped: mcause " + std::to_string(t[0]) + " at " + hex(mepc) +
                    " (body +" + hex(mepc - img.body_addr) + ")";
        return res;
    }
    if (cap.exit_status != 0) {
        res.error = "qemu exited with status " + std::to_string(cap.exit_status) + ": " + cap.err;
        return res;
    }
    if (cap.out.size() != kSignatureBytes) {
        res.error = "qemu printed " + std::to_string(cap.out.size()) + " bytes, expected a " +
                    std::to_string(kSignatureBytes) + "-byte signature";
        return res;
    }
    res.signature = parse_signature(cap.out);
    res.ok = true;
    return res;
}

namespace {
std::vector<uint8_t> le_bytes(const std::vector<uint32_t>& words) {
    std::vector<uint8_t> bytes;
    for (uint32_t w : words)
        for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<uint8_t>(w >> (8 * i)));
    return bytes;
}
Capture objdump_words(const std::vector<uint32_t>& words, const std::string& objdump,
                      const std::string& tmpdir) {
    TempFile file(tmpdir, le_bytes(words));
    return run_command({objdump, "-D", "-b", "binary", "-m", "riscv:rv32", "-M",
                        "no-aliases,numeric", "--adjust-vma=0", file.path()},
                       30.0);
}
// "  1c:\t800003b7          \tlui\tx7,0x80000" -> address 0x1c, fields after the address.
bool parse_line(const std::string& line, unsigned& addr, std::vector<std::string>& fields) {
    char colon = 0;
    if (std::sscanf(line.c_str(), " %x%c", &addr, &colon) != 2 || colon != ':') return false;
    fields.clear();
    size_t pos = line.find('\t');
    if (pos == std::string::npos) return false;
    while (pos != std::string::npos) {
        size_t next = line.find('\t', pos + 1);
        std::string f =
            line.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
        while (!f.empty() && f.back() == ' ') f.pop_back();
        fields.push_back(f);
        pos = next;
    }
    return true;
}
}  // namespace

std::vector<std::string> objdump_mnemonics(const std::vector<uint32_t>& words,
                                           const std::string& objdump, const std::string& tmpdir) {
    std::vector<std::string> out(words.size(), "?");
    Capture cap = objdump_words(words, objdump, tmpdir);
    if (cap.exit_status != 0) return out;
    std::istringstream in(std::string(cap.out.begin(), cap.out.end()));
    std::string line;
    std::vector<std::string> fields;
    unsigned addr = 0;
    while (std::getline(in, line)) {
        if (!parse_line(line, addr, fields) || fields.size() < 2 || addr % 4 ||
            addr / 4 >= out.size())
            continue;
        out[addr / 4] = fields[1];
    }
    return out;
}

std::string disassemble(const Program& prog, const std::string& objdump, const std::string& tmpdir,
                        uint32_t from_word, uint32_t to_word) {
    Capture cap = objdump_words(prog.body, objdump, tmpdir);
    if (cap.exit_status != 0)
        return "(objdump failed: status " + std::to_string(cap.exit_status) + " " + cap.err + ")\n";

    // Keep instruction lines in [from_word, to_word) and mark block starts.
    std::map<uint32_t, const Block*> starts;
    for (const auto& b : prog.blocks) starts[b.first_word] = &b;
    const uint32_t dump_word =
        prog.blocks.empty() ? 0 : prog.blocks.back().first_word + prog.blocks.back().words;
    std::istringstream in(std::string(cap.out.begin(), cap.out.end()));
    std::ostringstream out;
    std::string line;
    while (std::getline(in, line)) {
        unsigned addr = 0;
        std::vector<std::string> fields;
        if (!parse_line(line, addr, fields)) continue;
        uint32_t wi = addr / 4;
        if (wi < from_word || wi >= to_word) continue;
        if (wi == 0) out << "  # register init\n";
        if (auto it = starts.find(wi); it != starts.end()) {
            out << "  # block " << (it->second - prog.blocks.data()) << " (unit "
                << it->second->unit << "): " << it->second->kind << "\n";
        }
        if (wi == dump_word && !prog.blocks.empty()) out << "  # end: register dump\n";
        out << line << "\n";
    }
    return out.str();
}

}  // namespace difftest
