#include "fabric/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fabric/error.h"
#include "utf8.h"

namespace fabric {

namespace {

// What a non-regular file is, for the message that refuses it.
std::string_view file_type_name(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a file";
}

class OpenFile {
  public:
    OpenFile(const std::string& path, const InputKind& kind) {
        // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused right after).
        fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (fd_ < 0) {
            fail(ErrorCategory::BadInput, "{}: cannot open {}: {}", path, kind.name,
                 std::strerror(errno));
        }
    }
    ~OpenFile() { ::close(fd_); }
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    int fd() const { return fd_; }

  private:
    int fd_ = -1;
};

[[noreturn]] void too_large(const std::string& path, const InputKind& kind, std::string_view size) {
    fail(ErrorCategory::BadInput, "{}: file is {} bytes; a {} is at most {} bytes", path, size,
         kind.name, kind.max_bytes);
}

}  // namespace

std::string read_input_file(const std::string& path, const InputKind& kind) {
    const OpenFile file(path, kind);
    struct stat st {};
    if (::fstat(file.fd(), &st) != 0) {
        fail(ErrorCategory::BadInput, "{}: cannot read {}: {}", path, kind.name,
             std::strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        fail(ErrorCategory::BadInput, "{}: not a regular file ({}); a {} must be a file", path,
             file_type_name(st.st_mode), kind.name);
    }
    if (static_cast<uint64_t>(st.st_size) > kind.max_bytes) {
        too_large(path, kind, std::to_string(st.st_size));
    }
    // Read until end of file, but never past the limit: a file may grow while it is read, and
    // some (procfs) report a size of 0.
    std::string bytes;
    bytes.reserve(static_cast<size_t>(st.st_size));
    char chunk[64 * 1024];
    while (true) {
        const ssize_t got = ::read(file.fd(), chunk, sizeof chunk);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            fail(ErrorCategory::BadInput, "{}: cannot read {}: {}", path, kind.name,
                 std::strerror(errno));
        }
        if (got == 0) break;
        if (bytes.size() + static_cast<size_t>(got) > kind.max_bytes) {
            too_large(path, kind, fmt::format("more than {}", kind.max_bytes));
        }
        bytes.append(chunk, static_cast<size_t>(got));
    }
    return bytes;
}

void check_text(std::string_view text, const std::string& source) {
    uint32_t line = 1;
    uint32_t column = 1;
    for (size_t at = 0; at < text.size();) {
        const utf8::Char c = utf8::decode(text, at);
        const auto where = [&] { return fmt::format("{}:{}:{}", source, line, column); };
        if (c.length == 0) {
            fail(ErrorCategory::BadDescriptor, "{}: byte \\x{:02x} is not UTF-8 text", where(),
                 static_cast<uint8_t>(text[at]));
        }
        if (c.code == 0) {
            fail(ErrorCategory::BadDescriptor, "{}: NUL byte: a descriptor is text, not binary",
                 where());
        }
        if (utf8::is_control(c.code) && c.code != '\t' && c.code != '\n' && c.code != '\r') {
            fail(ErrorCategory::BadDescriptor,
                 "{}: control character U+{:04X} (a descriptor has none but tab and line ends)",
                 where(), c.code);
        }
        if (c.code == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
        at += c.length;
    }
}

std::string read_text_file(const std::string& path, const InputKind& kind) {
    std::string text = read_input_file(path, kind);
    check_text(text, path);
    return text;
}

}  // namespace fabric
