// KmdServer / RemoteKmdPort (fabric/kmd_socket.h): the simulated driver served on a Unix socket.
// PcieDevice over the remote port moves the same bytes as over the port itself; a client's
// windows go back when it disconnects; the clock runs, pauses and steps as asked; bad requests
// get their error and leave the server serving; no server is a clear device error.
#include "fabric/kmd_socket.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <random>
#include <thread>

#include "expect_error.h"
#include "fabric/elf.h"
#include "fabric/launch.h"
#include "fabric/pcie_device.h"
#include "fabric/sim_device.h"
#include "fabric/sim_kmd_port.h"
#include "test_elf.h"

using fabric::ErrorCategory;
using fabric::KmdServerControl;

namespace {

const std::string kSocDir = FABRIC_SOC_DESCRIPTOR_DIR;

// A socket path of its own under /tmp: a Unix socket's path must fit 107 bytes, which a deep
// build directory may not.
std::string socket_path(const std::string& name) {
    return "/tmp/fabric_kmd_" + name + "_" + std::to_string(::getpid()) + ".sock";
}

fabric::SocDescriptor wh_soc() {
    return fabric::SocDescriptor::load_file(kSocDir + "/wormhole_b0_80_arch.yaml");
}

// An ERISC that spins forever: the model has something to run, so its clock moves while the
// server runs free (an idle model stands still: KmdPort::advance runs while a core is busy).
void start_spinning(fabric::SimDevice& sim) {
    namespace t = fabric::test;
    const uint32_t base = hal::kWormholeB0.app_fw_base;
    static const auto img = fabric::ElfImage::parse(
        t::program_elf({t::rv::addi(1, 0, 1), t::rv::kJalSelf}, base), "spin.elf");
    const fabric::LaunchTarget target{
        {0, {9, 0}}, &img, fabric::erisc_placement(hal::kWormholeB0, 262144)};
    const auto methods = fabric::load_many(sim, {&target, 1});
    fabric::start_many(sim, {&target, 1}, methods);
}

// A server over a one-chip Wormhole model, serving on its own thread until the test ends.
struct Served {
    std::shared_ptr<fabric::SimDevice> sim;
    std::shared_ptr<fabric::SimKmdPort> port;
    std::unique_ptr<fabric::KmdServer> server;
    std::atomic<bool> keep{true};
    std::thread thread;

    Served(const std::string& name, bool paused, bool spin = false) {
        sim = std::make_shared<fabric::SimDevice>(wh_soc(), hal::Arch::WormholeB0, 1);
        if (spin) start_spinning(*sim);
        port = std::make_shared<fabric::SimKmdPort>(sim);
        fabric::KmdServerOptions o;
        o.paused = paused;
        o.quantum_cycles = 1'000;
        server = std::make_unique<fabric::KmdServer>(port, socket_path(name), o);
        thread = std::thread([this] { server->serve([this] { return keep.load(); }); });
    }
    ~Served() { stop(); }
    void stop() {
        keep = false;
        if (thread.joinable()) thread.join();
    }
    const std::string& path() const { return server->socket_path(); }
};

std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
    std::vector<uint8_t> v(n);
    std::mt19937 g(seed);
    for (auto& b : v) b = static_cast<uint8_t>(g());
    return v;
}

// One raw request on a fresh connection: the reply's body.
struct RawClient {
    int fd = -1;
    explicit RawClient(const std::string& path) {
        fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::strcpy(a.sun_path, path.c_str());
        REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    }
    ~RawClient() { ::close(fd); }
    std::vector<uint8_t> call(const std::vector<uint8_t>& body) {
        const auto n = static_cast<uint32_t>(body.size());
        REQUIRE(::send(fd, &n, 4, 0) == 4);
        REQUIRE(::send(fd, body.data(), body.size(), 0) == ssize_t(body.size()));
        uint32_t len = 0;
        REQUIRE(::recv(fd, &len, 4, MSG_WAITALL) == 4);
        std::vector<uint8_t> out(len);
        REQUIRE(::recv(fd, out.data(), len, MSG_WAITALL) == ssize_t(len));
        return out;
    }
    // The error message of a failed reply (status 0, category, length-prefixed text).
    static std::string error_of(const std::vector<uint8_t>& reply) {
        REQUIRE(reply.size() >= 6);
        CHECK(reply[0] == 0);
        uint32_t n = 0;
        std::memcpy(&n, reply.data() + 2, 4);
        return {reply.begin() + 6, reply.begin() + 6 + n};
    }
};

}  // namespace

TEST_CASE("sim server: PcieDevice over the socket moves the bytes the model holds",
          "[kmd_socket]") {
    Served s("bytes", /*paused=*/true);
    const auto data = pattern(40'000, 7);  // crosses no window edge, spans many words
    const fabric::CoreLocation core{0, {1, 1}};
    {  // the client and its device close before the server stops
        auto remote = std::make_shared<fabric::RemoteKmdPort>(s.path());
        CHECK(remote->description() == "sim server " + s.path() + ": " + s.port->description());
        CHECK(remote->has_sim_control());
        CHECK(remote->list_devices() == std::vector<uint32_t>{0});
        fabric::PcieDeviceOptions o;
        o.discover_links = false;
        fabric::PcieDevice dev(remote, wh_soc(), o);
        dev.write(core, 0x20000, data);
        std::vector<uint8_t> back(data.size());
        dev.read(core, 0x20000, back);
        CHECK(back == data);
        dev.write32(core, 0x30000, 0xC0FFEE01u);
        CHECK(dev.read32(core, 0x30000) == 0xC0FFEE01u);
        // The clock of a paused server moves only when a client steps it.
        const uint64_t c0 = remote->cycles(0);
        CHECK(remote->step(500, 0) == 500);
        CHECK(remote->cycles(0) == c0 + 500);
    }
    s.stop();
    // What the client wrote is in the model's L1.
    std::vector<uint8_t> direct(data.size());
    s.sim->read(core, 0x20000, direct);
    CHECK(direct == data);
    CHECK(s.sim->read32(core, 0x30000) == 0xC0FFEE01u);
}

TEST_CASE("sim server: a client that goes away gives its TLB windows back", "[kmd_socket]") {
    Served s("windows", /*paused=*/true);
    {
        auto remote = std::make_shared<fabric::RemoteKmdPort>(s.path());
        fabric::PcieDeviceOptions o;
        o.discover_links = false;
        fabric::PcieDevice dev(remote, wh_soc(), o);
        (void)dev.read32({0, {1, 1}}, 0x100);  // allocates a window
        const auto st = remote->control(KmdServerControl::Status);
        CHECK(st.clients == 1);
    }  // the connection closes here, as a killed client's would
    fabric::RemoteKmdPort other(s.path());
    fabric::KmdServerStatus st;
    for (int i = 0; i < 100; ++i) {  // the server sees the close at its next poll
        st = other.control(KmdServerControl::Status);
        if (st.clients == 1) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(st.clients == 1);
    s.stop();
    CHECK(s.port->windows_in_use(0) == 0);
}

TEST_CASE("sim server: running, paused and stepped, and stopped by a client", "[kmd_socket]") {
    Served s("clock", /*paused=*/false, /*spin=*/true);
    fabric::RemoteKmdPort remote(s.path());
    const uint64_t a = remote.control(KmdServerControl::Status).cycles;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto running = remote.control(KmdServerControl::Status);
    CHECK(running.running);
    CHECK(running.cycles > a);  // free-running
    const auto paused = remote.control(KmdServerControl::Pause);
    CHECK_FALSE(paused.running);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(remote.control(KmdServerControl::Status).cycles == paused.cycles);
    CHECK(remote.control(KmdServerControl::Step, 1234).cycles == paused.cycles + 1234);
    CHECK(remote.control(KmdServerControl::Resume).running);
    remote.control(KmdServerControl::Stop);
    s.thread.join();  // serve() returned on its own
}

TEST_CASE("sim server: bad requests get their error and the server goes on serving",
          "[kmd_socket]") {
    Served s("bad", /*paused=*/true);
    {
        RawClient raw(s.path());
        CHECK(RawClient::error_of(raw.call({0xEE})) == "sim server: unknown request 238");
        // The same connection still works: no file 9 is open.
        std::vector<uint8_t> ioctl{5, 9, 0, 0, 0};  // Ioctl, file 9
        ioctl.resize(ioctl.size() + 8 + 4, 0);      // request 0, no argument
        CHECK(RawClient::error_of(raw.call(ioctl)) == "sim server: no open file 9");
        // A request cut short cannot be read: its error, then the connection ends.
        CHECK(RawClient::error_of(raw.call({3, 0})) ==
              "sim server: malformed message (2 bytes, field at 1)");
    }
    fabric::RemoteKmdPort remote(s.path());
    CHECK(remote.list_devices() == std::vector<uint32_t>{0});
    CHECK(fabric::test::expect_error(ErrorCategory::Device, [&] { (void)remote.open(3); }) ==
          "cannot open /dev/tenstorrent/3 (simulated): No such file or directory");
}

TEST_CASE("sim server: no server at the path is a device error that says what to do",
          "[kmd_socket]") {
    const std::string path = socket_path("nobody");
    ::unlink(path.c_str());
    CHECK(
        fabric::test::expect_error(ErrorCategory::Device, [&] { fabric::RemoteKmdPort p(path); }) ==
        "no sim server answers at " + path +
            ": No such file or directory (start one with `fabricctl sim serve`)");
}

TEST_CASE("sim server: LOCK_CTL, one holder per lock, released when its file closes",
          "[kmd_socket]") {
    namespace kmd = fabric::kmd;
    Served s("locks", /*paused=*/true);
    const auto lock = [](fabric::KmdFile& f, uint32_t flags, uint32_t index, int* rc = nullptr) {
        kmd::LockCtl l{};
        l.in.output_size_bytes = sizeof(l.out);
        l.in.flags = flags;
        l.in.index = static_cast<uint8_t>(index);
        const int r = f.ioctl(kmd::kLockCtl, &l);
        if (rc != nullptr) *rc = r;
        return l.out.value;
    };
    auto a_port = std::make_shared<fabric::RemoteKmdPort>(s.path());
    auto b_port = std::make_shared<fabric::RemoteKmdPort>(s.path());
    auto a = a_port->open(0);
    auto b = b_port->open(0);
    CHECK(lock(*a, kmd::kLockAcquire, 8) == 1);
    CHECK(lock(*a, kmd::kLockAcquire, 8) == 1);  // held already: still ours
    CHECK(lock(*b, kmd::kLockAcquire, 8) == 0);  // another file holds it
    CHECK(lock(*b, kmd::kLockTest, 8) == 0);
    CHECK(lock(*a, kmd::kLockTest, 8) == 1);
    CHECK(lock(*b, kmd::kLockRelease, 8) == 0);  // not b's to release
    CHECK(lock(*b, kmd::kLockAcquire, 9) == 1);  // another index is free
    int rc = 0;
    (void)lock(*a, kmd::kLockAcquire, kmd::kLockCount, &rc);
    CHECK(rc == -EINVAL);
    (void)lock(*a, kmd::kLockAcquireBlocking, 8, &rc);
    CHECK(rc == -EINVAL);  // the single-threaded server cannot wait
    CHECK(lock(*a, kmd::kLockRelease, 8) == 1);
    CHECK(lock(*b, kmd::kLockAcquire, 8) == 1);
    // A client that goes away (here: closes its file) gives its locks back.
    b.reset();
    uint8_t got = 0;
    for (int i = 0; i < 100 && got == 0; ++i) {
        got = lock(*a, kmd::kLockAcquire, 8);
        if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(got == 1);
    CHECK(lock(*a, kmd::kLockAcquire, 9) == 1);
}
