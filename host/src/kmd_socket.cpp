// KmdServer and RemoteKmdPort (kmd_socket.h): a KmdPort over a Unix stream socket.
//
// A message is a 32-bit little-endian body length, then the body. A request body is an Op and its
// fields; a reply body is a status byte (1 ok, 0 failed: then the ErrorCategory and the message),
// then the op's results. Integers are little-endian, byte strings a 32-bit length and the bytes.
#include "fabric/kmd_socket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "fabric/error.h"
#include "fabric/kmd_abi.h"

namespace fabric {

namespace {

enum class Op : uint8_t {
    Hello = 1,
    List,
    Open,
    CloseFile,
    Ioctl,
    Map,
    Unmap,
    Read,
    Write,
    Read32,
    Write32,
    Flush,
    Advance,
    Cycles,
    Step,
    Control,
};

// Appends fields to a message body.
class Out {
  public:
    template <typename T>
    Out& put(T v) {
        return append(&v, sizeof(T));
    }
    Out& put_bytes(const void* data, size_t n) {
        put(static_cast<uint32_t>(n));
        return append(data, n);
    }
    Out& put_str(const std::string& s) { return put_bytes(s.data(), s.size()); }
    std::vector<uint8_t>& bytes() { return bytes_; }

  private:
    Out& append(const void* data, size_t n) {
        const size_t at = bytes_.size();
        bytes_.resize(at + n);
        if (n != 0) std::memcpy(bytes_.data() + at, data, n);
        return *this;
    }
    std::vector<uint8_t> bytes_;
};

// Reads fields of a received body; a field beyond its end is a malformed message.
class In {
  public:
    explicit In(std::span<const uint8_t> body) : body_(body) {}
    template <typename T>
    T get() {
        T v{};
        std::memcpy(&v, take(sizeof(T)), sizeof(T));
        return v;
    }
    std::span<const uint8_t> get_bytes() {
        const uint32_t n = get<uint32_t>();
        return {take(n), n};
    }
    std::string get_str() {
        const auto b = get_bytes();
        return {b.begin(), b.end()};
    }

  private:
    const uint8_t* take(size_t n) {
        if (n > body_.size() - at_) {
            fail(ErrorCategory::BadInput, "sim server: malformed message ({} bytes, field at {})",
                 body_.size(), at_);
        }
        const uint8_t* p = body_.data() + at_;
        at_ += n;
        return p;
    }
    std::span<const uint8_t> body_;
    size_t at_ = 0;
};

// Write all of `bytes`, waiting at most `timeout_ms` for the peer to take them.
bool send_all(int fd, std::span<const uint8_t> bytes, int timeout_ms) {
    size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return false;
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, timeout_ms) <= 0) return false;
    }
    return true;
}

// One message: its length, then its body.
bool send_message(int fd, const std::vector<uint8_t>& body, int timeout_ms) {
    const auto n = static_cast<uint32_t>(body.size());
    uint8_t len[sizeof(n)];
    std::memcpy(len, &n, sizeof(n));
    return send_all(fd, len, timeout_ms) && send_all(fd, body, timeout_ms);
}

// Read exactly `n` bytes, waiting at most `timeout_ms` for each part.
bool recv_all(int fd, uint8_t* out, size_t n, int timeout_ms) {
    size_t done = 0;
    while (done < n) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, timeout_ms) <= 0) return false;
        const ssize_t got = ::recv(fd, out + done, n - done, 0);
        if (got <= 0 && !(got < 0 && errno == EINTR)) return false;
        if (got > 0) done += static_cast<size_t>(got);
    }
    return true;
}

sockaddr_un socket_address(const std::string& path) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (path.empty() || path.size() >= sizeof(a.sun_path)) {
        fail(ErrorCategory::BadInput, "sim server socket '{}': the path must be 1..{} bytes", path,
             sizeof(a.sun_path) - 1);
    }
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    return a;
}

// The bytes of an ioctl's argument struct: the ABI structs (kmd_abi.h) carry no size in the
// request number, so the client says how much to ship. QUERY_MAPPINGS is followed by its records.
size_t ioctl_arg_bytes(unsigned long request, const void* arg) {
    namespace k = kmd;
    switch (request) {
        case k::kGetDeviceInfo:
            return sizeof(k::GetDeviceInfo);
        case k::kGetDriverInfo:
            return sizeof(k::GetDriverInfo);
        case k::kAllocateTlb:
            return sizeof(k::AllocateTlb);
        case k::kFreeTlb:
            return sizeof(k::FreeTlb);
        case k::kConfigureTlb:
            return sizeof(k::ConfigureTlb);
        case k::kLockCtl:
            return sizeof(k::LockCtl);
        case k::kQueryMappings: {
            k::QueryMappingsIn in{};
            std::memcpy(&in, arg, sizeof(in));
            constexpr uint32_t kMaxRecords = 64;  // the driver has 6
            return sizeof(in) + sizeof(k::Mapping) * std::min(in.output_mapping_count, kMaxRecords);
        }
        default:
            return 0;  // the server's driver refuses what it does not know (-ENOTTY)
    }
}

}  // namespace

std::string default_sim_socket() {
    const char* s = std::getenv("FABRIC_SIM_SOCKET");
    return s ? s : "";
}

// ---------------------------------------------------------------------------------------------
// Server

struct KmdServer::Client {
    int fd = -1;
    std::vector<uint8_t> buffer;  // received, not yet handled
    uint32_t next_id = 1;
    // Mappings first: they are destroyed before the files they came from.
    std::map<uint32_t, std::unique_ptr<KmdFile>> files;
    std::map<uint32_t, std::unique_ptr<KmdMapping>> maps;
    ~Client() {
        maps.clear();
        files.clear();
        if (fd >= 0) ::close(fd);
    }
};

KmdServer::KmdServer(std::shared_ptr<KmdPort> port, std::string socket_path,
                     KmdServerOptions options)
    : port_(std::move(port)), path_(std::move(socket_path)), options_(options) {
    running_ = !options_.paused;
    const sockaddr_un addr = socket_address(path_);
    struct stat st {};
    if (::lstat(path_.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            fail(ErrorCategory::BadInput,
                 "sim server socket '{}': a file that is not a socket is there", path_);
        }
        ::unlink(path_.c_str());  // a stale socket of a server that did not clean up
    }
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listen_fd_ < 0 ||
        ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
        const int e = errno;
        if (listen_fd_ >= 0) ::close(listen_fd_);
        fail(ErrorCategory::Device, "sim server socket '{}': {}", path_, std::strerror(e));
    }
}

KmdServer::~KmdServer() {
    clients_.clear();
    if (listen_fd_ >= 0) ::close(listen_fd_);
    ::unlink(path_.c_str());
}

KmdServerStatus KmdServer::status() const {
    return {port_->description(), running_, port_->cycles(options_.clock_mhz),
            static_cast<uint32_t>(clients_.size())};
}

void KmdServer::drop(size_t index) {
    clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(index));
}

void KmdServer::serve(const std::function<bool()>& keep_going) {
    constexpr int kPollMs = 50;
    while (!stop_ && keep_going()) {
        std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
        for (const auto& c : clients_) fds.push_back({c->fd, POLLIN, 0});
        const int ready = ::poll(fds.data(), fds.size(), running_ ? 0 : kPollMs);
        if (ready < 0 && errno != EINTR)
            fail(ErrorCategory::Device, "sim server: poll: {}", std::strerror(errno));
        if (ready <= 0) {
            if (running_) advance_between_requests();
            continue;
        }
        interactive_left_ = options_.quantum_cycles;
        if (fds[0].revents & POLLIN) {
            const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd >= 0) {
                clients_.push_back(std::make_unique<Client>());
                clients_.back()->fd = fd;
            }
        }
        // Clients in reverse, so dropping one leaves the indices of the rest valid.
        for (size_t i = fds.size() - 1; i >= 1; --i) {
            if (fds[i].revents == 0 || i - 1 >= clients_.size()) continue;
            Client& c = *clients_[i - 1];
            uint8_t chunk[65536];
            const ssize_t n = ::recv(c.fd, chunk, sizeof(chunk), 0);
            if (n <= 0) {
                if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
                drop(i - 1);  // closed or failed: its files and windows go back
                continue;
            }
            c.buffer.insert(c.buffer.end(), chunk, chunk + n);
            while (c.buffer.size() >= 4) {
                uint32_t len = 0;
                std::memcpy(&len, c.buffer.data(), 4);
                if (len > kMaxKmdMessage || c.buffer.size() < 4 + size_t{len}) break;
                if (!handle(c)) break;
            }
            uint32_t len = 0;
            if (c.buffer.size() >= 4) std::memcpy(&len, c.buffer.data(), 4);
            if (c.fd < 0 || len > kMaxKmdMessage) drop(i - 1);
        }
    }
}

void KmdServer::advance_between_requests() {
    if (interactive_left_ == 0) {
        port_->advance(options_.quantum_cycles, options_.clock_mhz);
        return;
    }
    const uint64_t step =
        std::min(std::max<uint64_t>(options_.interactive_cycles, 1), interactive_left_);
    port_->advance(step, options_.clock_mhz);
    interactive_left_ -= step;
}

namespace {

template <typename Map>
auto& lookup(Map& m, uint32_t id, const char* what) {
    const auto it = m.find(id);
    if (it == m.end()) fail(ErrorCategory::BadInput, "sim server: no open {} {}", what, id);
    return *it->second;
}

}  // namespace

bool KmdServer::handle(Client& c) {
    uint32_t len = 0;
    std::memcpy(&len, c.buffer.data(), 4);
    const std::vector<uint8_t> body(c.buffer.begin() + 4, c.buffer.begin() + 4 + len);
    c.buffer.erase(c.buffer.begin(), c.buffer.begin() + 4 + len);
    Out reply;
    Out results;
    bool keep = true;
    try {
        In in(body);
        const auto op = static_cast<Op>(in.get<uint8_t>());
        switch (op) {
            case Op::Hello:
                results.put_str(port_->description()).put<uint8_t>(port_->has_sim_control());
                break;
            case Op::List: {
                const auto ids = port_->list_devices();
                results.put(static_cast<uint32_t>(ids.size()));
                for (uint32_t id : ids) results.put(id);
                break;
            }
            case Op::Open: {
                auto f = port_->open(in.get<uint32_t>());
                const uint32_t id = c.next_id++;
                results.put(id).put_str(f->path());
                c.files[id] = std::move(f);
                break;
            }
            case Op::CloseFile:
                c.files.erase(in.get<uint32_t>());
                break;
            case Op::Ioctl: {
                KmdFile& f = lookup(c.files, in.get<uint32_t>(), "file");
                const auto request = static_cast<unsigned long>(in.get<uint64_t>());
                const auto arg = in.get_bytes();
                std::vector<uint8_t> a(arg.begin(), arg.end());
                a.resize(std::max<size_t>(a.size(), 8));  // never a null argument
                const int ret = f.ioctl(request, a.data());
                results.put(static_cast<int32_t>(ret)).put_bytes(a.data(), arg.size());
                break;
            }
            case Op::Map: {
                KmdFile& f = lookup(c.files, in.get<uint32_t>(), "file");
                const auto offset = in.get<uint64_t>();
                const auto size = in.get<uint64_t>();
                int error = 0;
                auto m = f.map(offset, size, error);
                const uint32_t id = m ? c.next_id++ : 0;
                results.put(static_cast<int32_t>(m ? 0 : error)).put(id).put(m ? m->size() : 0);
                if (m) c.maps[id] = std::move(m);
                break;
            }
            case Op::Unmap:
                c.maps.erase(in.get<uint32_t>());
                break;
            case Op::Read: {
                KmdMapping& m = lookup(c.maps, in.get<uint32_t>(), "mapping");
                const auto offset = in.get<uint64_t>();
                const auto n = in.get<uint32_t>();
                if (n > kMaxKmdMessage - 64)
                    fail(ErrorCategory::BadInput, "sim server: read of {} bytes", n);
                std::vector<uint8_t> data(n);
                m.read(offset, data);
                results.put_bytes(data.data(), data.size());
                break;
            }
            case Op::Write: {
                KmdMapping& m = lookup(c.maps, in.get<uint32_t>(), "mapping");
                const auto offset = in.get<uint64_t>();
                m.write(offset, in.get_bytes());
                break;
            }
            case Op::Read32: {
                KmdMapping& m = lookup(c.maps, in.get<uint32_t>(), "mapping");
                results.put(m.read32(in.get<uint64_t>()));
                break;
            }
            case Op::Write32: {
                KmdMapping& m = lookup(c.maps, in.get<uint32_t>(), "mapping");
                const auto offset = in.get<uint64_t>();
                m.write32(offset, in.get<uint32_t>());
                break;
            }
            case Op::Flush:
                lookup(c.maps, in.get<uint32_t>(), "mapping").flush();
                break;
            case Op::Advance: {
                const auto cycles = in.get<uint64_t>();
                results.put(port_->advance(cycles, in.get<uint32_t>()));
                break;
            }
            case Op::Cycles:
                results.put(port_->cycles(in.get<uint32_t>()));
                break;
            case Op::Step: {
                const auto cycles = in.get<uint64_t>();
                results.put(port_->step(cycles, in.get<uint32_t>()));
                break;
            }
            case Op::Control: {
                const auto what = static_cast<KmdServerControl>(in.get<uint8_t>());
                const auto cycles = in.get<uint64_t>();
                if (what == KmdServerControl::Pause) running_ = false;
                if (what == KmdServerControl::Resume) running_ = true;
                if (what == KmdServerControl::Step) port_->step(cycles, options_.clock_mhz);
                if (what == KmdServerControl::Stop) stop_ = true;
                const KmdServerStatus s = status();
                results.put_str(s.description).put<uint8_t>(s.running).put(s.cycles).put(s.clients);
                break;
            }
            default:
                fail(ErrorCategory::BadInput, "sim server: unknown request {}",
                     static_cast<int>(op));
        }
        reply.put<uint8_t>(1);
    } catch (const Error& e) {
        reply.put<uint8_t>(0).put(static_cast<uint8_t>(e.category())).put_str(e.what());
        // A request the server could not even read leaves the stream out of step: end it.
        keep = e.category() != ErrorCategory::BadInput ||
               std::string_view(e.what()).find("malformed") == std::string_view::npos;
        results.bytes().clear();
    }
    auto& r = reply.bytes();
    r.insert(r.end(), results.bytes().begin(), results.bytes().end());
    if (!send_message(c.fd, r, 5'000) || !keep) {
        ::close(c.fd);
        c.fd = -1;
        return false;
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
// Client

class RemoteKmdPort::Connection {
  public:
    explicit Connection(std::string path) : path_(std::move(path)) {
        const sockaddr_un addr = socket_address(path_);
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd_ < 0 ||
            ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
            const int e = errno;
            if (fd_ >= 0) ::close(fd_);
            fail(ErrorCategory::Device,
                 "no sim server answers at {}: {} (start one with `fabricctl sim serve`)", path_,
                 std::strerror(e));
        }
    }
    ~Connection() { ::close(fd_); }

    // Send one request, return the reply's results; a failed request throws its Error here.
    std::vector<uint8_t> call(Out& request) {
        if (!send_message(fd_, request.bytes(), kKmdReplyTimeoutMs)) lost("send");
        uint32_t len = 0;
        if (!recv_all(fd_, reinterpret_cast<uint8_t*>(&len), 4, kKmdReplyTimeoutMs)) lost("reply");
        if (len == 0 || len > kMaxKmdMessage) lost("reply length");
        std::vector<uint8_t> body(len);
        if (!recv_all(fd_, body.data(), len, kKmdReplyTimeoutMs)) lost("reply");
        In in(body);
        if (in.get<uint8_t>() == 0) {
            const auto category = static_cast<ErrorCategory>(in.get<uint8_t>());
            throw Error(category, in.get_str());
        }
        return {body.begin() + 1, body.end()};
    }
    const std::string& path() const { return path_; }

  private:
    [[noreturn]] void lost(const char* what) {
        fail(ErrorCategory::Device, "sim server at {}: no {} within {} s (did it stop?)", path_,
             what, kKmdReplyTimeoutMs / 1000);
    }
    std::string path_;
    int fd_ = -1;
};

namespace {

Out request(Op op) {
    Out o;
    o.put(static_cast<uint8_t>(op));
    return o;
}

class RemoteMapping final : public KmdMapping {
  public:
    RemoteMapping(std::shared_ptr<RemoteKmdPort::Connection> conn, uint32_t id, uint64_t size)
        : conn_(std::move(conn)), id_(id), size_(size) {}
    ~RemoteMapping() override {
        try {
            auto r = request(Op::Unmap).put(id_);
            conn_->call(r);
        } catch (const Error&) {
            // the server is gone: nothing is left to release
        }
    }
    uint64_t size() const override { return size_; }
    void write(uint64_t offset, std::span<const uint8_t> bytes) override {
        auto r = request(Op::Write).put(id_).put(offset).put_bytes(bytes.data(), bytes.size());
        conn_->call(r);
    }
    void read(uint64_t offset, std::span<uint8_t> bytes) override {
        auto r = request(Op::Read).put(id_).put(offset).put(static_cast<uint32_t>(bytes.size()));
        const auto body = conn_->call(r);
        const auto data = In(body).get_bytes();
        if (data.size() != bytes.size()) fail(ErrorCategory::Device, "sim server: short read");
        std::memcpy(bytes.data(), data.data(), data.size());
    }
    void write32(uint64_t offset, uint32_t value) override {
        auto r = request(Op::Write32).put(id_).put(offset).put(value);
        conn_->call(r);
    }
    uint32_t read32(uint64_t offset) override {
        auto r = request(Op::Read32).put(id_).put(offset);
        const auto body = conn_->call(r);
        return In(body).get<uint32_t>();
    }
    void flush() override {
        auto r = request(Op::Flush).put(id_);
        conn_->call(r);
    }

  private:
    std::shared_ptr<RemoteKmdPort::Connection> conn_;
    uint32_t id_;
    uint64_t size_;
};

class RemoteFile final : public KmdFile {
  public:
    RemoteFile(std::shared_ptr<RemoteKmdPort::Connection> conn, uint32_t id, std::string path)
        : conn_(std::move(conn)), id_(id), path_(std::move(path)) {}
    ~RemoteFile() override {
        try {
            auto r = request(Op::CloseFile).put(id_);
            conn_->call(r);
        } catch (const Error&) {
        }
    }
    const std::string& path() const override { return path_; }
    int ioctl(unsigned long request_number, void* arg) override {
        const size_t n = arg ? ioctl_arg_bytes(request_number, arg) : 0;
        auto r = request(Op::Ioctl)
                     .put(id_)
                     .put(static_cast<uint64_t>(request_number))
                     .put_bytes(arg, n);
        const auto body = conn_->call(r);
        In in(body);
        const auto ret = in.get<int32_t>();
        const auto out = in.get_bytes();
        if (out.size() != n)
            fail(ErrorCategory::Device, "sim server: ioctl reply of {} bytes", out.size());
        if (n != 0) std::memcpy(arg, out.data(), n);
        return ret;
    }
    std::unique_ptr<KmdMapping> map(uint64_t offset, uint64_t size, int& error) override {
        auto r = request(Op::Map).put(id_).put(offset).put(size);
        const auto body = conn_->call(r);
        In in(body);
        error = in.get<int32_t>();
        const auto id = in.get<uint32_t>();
        const auto mapped = in.get<uint64_t>();
        if (error != 0) return nullptr;
        return std::make_unique<RemoteMapping>(conn_, id, mapped);
    }

  private:
    std::shared_ptr<RemoteKmdPort::Connection> conn_;
    uint32_t id_;
    std::string path_;
};

KmdServerStatus read_status(const std::vector<uint8_t>& body) {
    In in(body);
    KmdServerStatus s;
    s.description = in.get_str();
    s.running = in.get<uint8_t>() != 0;
    s.cycles = in.get<uint64_t>();
    s.clients = in.get<uint32_t>();
    return s;
}

}  // namespace

RemoteKmdPort::RemoteKmdPort(std::string socket_path)
    : conn_(std::make_shared<Connection>(std::move(socket_path))) {
    auto r = request(Op::Hello);
    const auto body = conn_->call(r);
    In in(body);
    description_ = fmt::format("sim server {}: {}", conn_->path(), in.get_str());
    has_sim_control_ = in.get<uint8_t>() != 0;
}

RemoteKmdPort::~RemoteKmdPort() = default;

std::string RemoteKmdPort::description() const {
    return description_;
}

std::vector<uint32_t> RemoteKmdPort::list_devices() {
    auto r = request(Op::List);
    const auto body = conn_->call(r);
    In in(body);
    std::vector<uint32_t> out(in.get<uint32_t>());
    for (uint32_t& id : out) id = in.get<uint32_t>();
    return out;
}

std::unique_ptr<KmdFile> RemoteKmdPort::open(uint32_t ordinal) {
    auto r = request(Op::Open).put(ordinal);
    const auto body = conn_->call(r);
    In in(body);
    const auto id = in.get<uint32_t>();
    return std::make_unique<RemoteFile>(conn_, id, in.get_str());
}

uint64_t RemoteKmdPort::advance(uint64_t cycles, uint32_t clock_mhz) {
    auto r = request(Op::Advance).put(cycles).put(clock_mhz);
    return In(conn_->call(r)).get<uint64_t>();
}

uint64_t RemoteKmdPort::cycles(uint32_t clock_mhz) const {
    auto r = request(Op::Cycles).put(clock_mhz);
    return In(conn_->call(r)).get<uint64_t>();
}

uint64_t RemoteKmdPort::step(uint64_t cycles, uint32_t clock_mhz) {
    auto r = request(Op::Step).put(cycles).put(clock_mhz);
    return In(conn_->call(r)).get<uint64_t>();
}

KmdServerStatus RemoteKmdPort::control(KmdServerControl what, uint64_t cycles) {
    auto r = request(Op::Control).put(static_cast<uint8_t>(what)).put(cycles);
    return read_status(conn_->call(r));
}

}  // namespace fabric
