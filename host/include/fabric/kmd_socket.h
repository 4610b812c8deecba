// The model as a device other processes attach to: a KmdPort (in practice a SimKmdPort over a
// simulated cluster) served on a Unix socket by KmdServer, and RemoteKmdPort, the KmdPort a
// client opens on that socket. PcieDevice and every command above it run unchanged over it, as
// they run over /dev/tenstorrent (issue 20: `fabricctl sim serve`).
//
//   wire      one request, one reply, in order, over a stream socket: a 32-bit length, then the
//             body (kmd_socket.cpp). Lengths are bounded (kMaxKmdMessage); a malformed request
//             gets an error reply and closes that client only.
//   clients   any number at once; each request runs whole, so two clients never interleave inside
//             one access. A client's open files and mappings are its own: when it disconnects
//             (exit, crash, kill) the server closes them, so its TLB windows go back as the
//             driver's close would.
//   clock     free-running by default: between requests the server advances the model by a
//             quantum of cycles (KmdPort::advance: the model runs while a core is busy, so an idle
//             cluster costs nothing); paused, the clock moves only when a client advances it (a
//             PcieDevice's waits) or asks for `step`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fabric/kmd_port.h"

namespace fabric {

// The largest request or reply body: a 16 MiB TLB window's bulk copy and its header.
inline constexpr uint32_t kMaxKmdMessage = (16u << 20) + 64;
// How long a client waits for a reply before it says the server does not answer.
inline constexpr int kKmdReplyTimeoutMs = 120'000;

// The socket a `--target sim` command attaches to when none is given: $FABRIC_SIM_SOCKET, or
// empty (run an ephemeral model, as before).
std::string default_sim_socket();

struct KmdServerStatus {
    std::string description;  // the served port's
    bool running = true;      // free-running (false: paused)
    uint64_t cycles = 0;      // the model's clock
    uint32_t clients = 0;     // connected now, the asker included
};

struct KmdServerOptions {
    bool paused = false;
    uint64_t quantum_cycles = 10'000;  // advanced between requests while running
    // Right after a request the clock moves in steps of this many cycles until a quantum's worth
    // has passed with no request: a client in a conversation (one access after another, as
    // remote-chip access is) sees the model advance by little between its requests.
    uint64_t interactive_cycles = 200;
    uint32_t clock_mhz = 0;  // passed to KmdPort::advance (the model ignores it)
};

class KmdServer {
  public:
    // Listen on `socket_path` (a stale socket file is replaced; anything else there is refused
    // with Error(BadInput)). Error(Device) if the socket cannot be made.
    KmdServer(std::shared_ptr<KmdPort> port, std::string socket_path, KmdServerOptions options);
    ~KmdServer();  // closes every client and removes the socket file
    KmdServer(const KmdServer&) = delete;
    KmdServer& operator=(const KmdServer&) = delete;

    // Serve until a client asks the server to stop or `keep_going` (checked at least every
    // 50 ms) says no.
    void serve(const std::function<bool()>& keep_going);
    const std::string& socket_path() const { return path_; }
    KmdServerStatus status() const;

    struct Client;

  private:
    bool handle(Client& c);  // one complete request of c's buffer; false: drop the client
    void drop(size_t index);
    void advance_between_requests();

    std::shared_ptr<KmdPort> port_;
    std::string path_;
    KmdServerOptions options_;
    int listen_fd_ = -1;
    bool running_ = true;
    bool stop_ = false;
    uint64_t interactive_left_ = 0;  // cycles still to run in small steps since the last request
    std::vector<std::unique_ptr<Client>> clients_;
};

// What `fabricctl sim pause|resume|step|status|stop` ask a server.
enum class KmdServerControl : uint8_t { Status, Pause, Resume, Step, Stop };

class RemoteKmdPort final : public KmdPort {
  public:
    // Connect to the server at `socket_path`. Error(Device) naming the path if nothing answers.
    explicit RemoteKmdPort(std::string socket_path);
    ~RemoteKmdPort() override;

    std::string description()
        const override;  // "sim server /tmp/x.sock: sim (wormhole_b0, 2 chips)"
    std::vector<uint32_t> list_devices() override;
    std::unique_ptr<KmdFile> open(uint32_t ordinal) override;
    uint64_t advance(uint64_t cycles, uint32_t clock_mhz) override;
    uint64_t cycles(uint32_t clock_mhz) const override;
    uint64_t step(uint64_t cycles, uint32_t clock_mhz) override;
    bool has_sim_control() const override { return has_sim_control_; }

    // The server's own controls; `cycles` only for Step. Returns the status after the request.
    KmdServerStatus control(KmdServerControl what, uint64_t cycles = 0);

    class Connection;  // the socket and its request/reply exchange (kmd_socket.cpp)

  private:
    std::shared_ptr<Connection> conn_;
    std::string description_;
    bool has_sim_control_ = false;
};

}  // namespace fabric
