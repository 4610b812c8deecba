// LinuxKmdPort: the real system calls. Nothing here knows about TLB encodings or cores; it opens,
// ioctls, maps and copies.
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "fabric/error.h"
#include "fabric/kmd_port.h"

namespace fabric {

namespace {

uint64_t now_ns() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

// A BAR mapping: MMIO through 32-bit volatile accesses only (PCIe BAR reads/writes of other widths
// are not reliable on Wormhole, host-and-pcie §2.2).
class LinuxMapping final : public KmdMapping {
  public:
    LinuxMapping(void* base, uint64_t size, std::string what)
        : base_(static_cast<uint8_t*>(base)), size_(size), what_(std::move(what)) {}
    ~LinuxMapping() override { ::munmap(base_, size_); }

    uint64_t size() const override { return size_; }

    void write(uint64_t offset, std::span<const uint8_t> bytes) override {
        check(offset, bytes.size());
        size_t i = 0;
        while (i < bytes.size()) {
            const uint64_t at = offset + i;
            const uint64_t word = at & ~uint64_t{3};
            const size_t lane = at - word;
            const size_t n = std::min<size_t>(4 - lane, bytes.size() - i);
            uint32_t v;
            if (lane == 0 && n == 4) {
                std::memcpy(&v, bytes.data() + i, 4);
            } else {
                v = word32(word);
                std::memcpy(reinterpret_cast<uint8_t*>(&v) + lane, bytes.data() + i, n);
            }
            *reinterpret_cast<volatile uint32_t*>(base_ + word) = v;
            i += n;
        }
    }

    void read(uint64_t offset, std::span<uint8_t> bytes) override {
        check(offset, bytes.size());
        size_t i = 0;
        while (i < bytes.size()) {
            const uint64_t at = offset + i;
            const uint64_t word = at & ~uint64_t{3};
            const size_t lane = at - word;
            const size_t n = std::min<size_t>(4 - lane, bytes.size() - i);
            const uint32_t v = word32(word);
            std::memcpy(bytes.data() + i, reinterpret_cast<const uint8_t*>(&v) + lane, n);
            i += n;
        }
    }

    void write32(uint64_t offset, uint32_t value) override {
        check(offset, 4);
        *reinterpret_cast<volatile uint32_t*>(base_ + offset) = value;
    }

    uint32_t read32(uint64_t offset) override {
        check(offset, 4);
        return word32(offset);
    }

    void flush() override { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

  private:
    uint32_t word32(uint64_t offset) const {
        return *reinterpret_cast<const volatile uint32_t*>(base_ + offset);
    }
    void check(uint64_t offset, uint64_t len) const {
        if (offset > size_ || len > size_ - offset) {
            fail(ErrorCategory::Internal, "{}: access of {} bytes at {} leaves the {}-byte mapping",
                 what_, len, hex32(offset), size_);
        }
    }

    uint8_t* base_;
    uint64_t size_;
    std::string what_;
};

class LinuxFile final : public KmdFile {
  public:
    LinuxFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
    ~LinuxFile() override { ::close(fd_); }
    const std::string& path() const override { return path_; }

    int ioctl(unsigned long request, void* arg) override {
        if (::ioctl(fd_, request, arg) == 0) return 0;
        return -errno;
    }

    std::unique_ptr<KmdMapping> map(uint64_t offset, uint64_t size, int& error) override {
        void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_,
                         static_cast<off_t>(offset));
        if (p == MAP_FAILED) {
            error = errno;
            return nullptr;
        }
        error = 0;
        return std::make_unique<LinuxMapping>(p, size, path_);
    }

  private:
    int fd_;
    std::string path_;
};

}  // namespace

LinuxKmdPort::LinuxKmdPort(std::string dir) : dir_(std::move(dir)), start_ns_(now_ns()) {}

std::vector<uint32_t> LinuxKmdPort::list_devices() {
    std::vector<uint32_t> out;
    DIR* d = ::opendir(dir_.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.empty() || name.size() > 6 ||
            !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
            continue;  // ".", "..", "by-id"
        out.push_back(static_cast<uint32_t>(std::stoul(name)));
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

std::unique_ptr<KmdFile> LinuxKmdPort::open(uint32_t ordinal) {
    const std::string path = dir_ + "/" + std::to_string(ordinal);
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int e = errno;
        fail(ErrorCategory::Device, "cannot open {}: {}{}", path, std::strerror(e),
             e == EACCES   ? " (check the udev rule / permissions of the device node)"
             : e == ENOENT ? " (is the tt-kmd driver loaded?)"
                           : "");
    }
    return std::make_unique<LinuxFile>(fd, path);
}

uint64_t LinuxKmdPort::advance(uint64_t cycles, uint32_t clock_mhz) {
    // Real time passes on its own: sleep for what `cycles` clocks take at the core clock.
    const uint64_t ns = cycles * 1000 / std::max<uint32_t>(clock_mhz, 1);
    std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
    return cycles;
}

uint64_t LinuxKmdPort::cycles(uint32_t clock_mhz) const {
    return (now_ns() - start_ns_) * clock_mhz / 1000;
}

}  // namespace fabric
