#include "mesh_telemetry_cmd.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fabric/error.h"
#include "fabric/interrupt.h"
#include "fabric/telemetry.h"
#include "mesh_session.h"

namespace fabricctl {

namespace {

using fabric::ErrorCategory;
constexpr size_t kMaxRequestBytes = 8192;
constexpr int kRequestTimeoutMs = 1000;

// A listening socket on 127.0.0.1:port (0: any free port).
class MetricsListener {
  public:
    explicit MetricsListener(uint16_t port) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        const int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
            ::listen(fd_, 8) != 0) {
            fabric::fail(ErrorCategory::Device, "--listen {}: {}", port, std::strerror(errno));
        }
        socklen_t n = sizeof(a);
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n);
        port_ = ntohs(a.sin_port);
    }
    ~MetricsListener() { ::close(fd_); }
    uint16_t port() const { return port_; }

    // Answer one request if a client is waiting within `wait_ms`: GET /metrics gets `metrics()`,
    // anything else 404. A client that sends nothing in time is closed.
    void serve_one(int wait_ms, const std::function<std::string()>& metrics) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, wait_ms) <= 0) return;
        const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        const std::string request = read_head(c);
        const bool ok =
            request.rfind("GET /metrics ", 0) == 0 || request.rfind("GET /metrics\r", 0) == 0;
        const std::string body = ok ? metrics() : "not found: try /metrics\n";
        const std::string reply = fmt::format(
            "HTTP/1.0 {}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
            "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
            ok ? "200 OK" : "404 Not Found", body.size(), body);
        (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
        ::close(c);
    }

  private:
    static std::string read_head(int c) {
        std::string got;
        char buf[1024];
        while (got.find("\r\n\r\n") == std::string::npos && got.size() < kMaxRequestBytes) {
            pollfd p{c, POLLIN, 0};
            if (::poll(&p, 1, kRequestTimeoutMs) <= 0) break;
            const ssize_t n = ::recv(c, buf, sizeof(buf), 0);
            if (n <= 0) break;
            got.append(buf, static_cast<size_t>(n));
        }
        return got;
    }
    int fd_ = -1;
    uint16_t port_ = 0;
};

class MeshTelemetry final : public MeshFabricCommand {
  public:
    MeshTelemetry(CLI::App& app, bool& as_json)
        : MeshFabricCommand(
              app, as_json, "telemetry",
              "Every router's counters and link state in the Prometheus text format on stdout "
              "(sim: brings the fabric up first, terminates it after); with --listen PORT, "
              "served at http://127.0.0.1:PORT/metrics, read at each scrape, while a fabric that "
              "outlives the command runs (--target pcie, or a `fabricctl sim serve`)") {
        cmd_->add_option("--listen", listen_,
                         "Serve /metrics on this local port until SIGINT/SIGTERM (0: any free "
                         "port, printed on stderr)");
    }

    int run() const override {
        MeshSession s(args_, "telemetry", as_json_);
        if (listen_ && !s.pcie()) {
            fabric::fail(ErrorCategory::BadInput,
                         "--listen needs a fabric that outlives the command: --target pcie, or "
                         "--target sim with a sim server (fabricctl sim serve)");
        }
        return run_without_traffic(s, [&] {
            if (listen_) return serve(s, *listen_);
            if (!s.pcie()) s.bring_up_and_watch();
            fmt::print("{}", fabric::prometheus_text(fabric::read_telemetry(s.runner())));
            if (!s.pcie()) s.terminate();
            return finish_stdout(kOk);
        });
    }

  private:
    static int serve(MeshSession& s, uint16_t port) {
        MetricsListener listener(port);
        log_line(
            fmt::format("mesh telemetry: serving http://127.0.0.1:{}/metrics; stop with "
                        "Ctrl-C",
                        listener.port()));
        while (fabric::interrupt_requested() == 0) {
            listener.serve_one(
                50, [&] { return fabric::prometheus_text(fabric::read_telemetry(s.runner())); });
        }
        const int sig = fabric::interrupt_requested();
        log_line(fmt::format("mesh telemetry: stopped by {}", fabric::signal_name(sig)));
        return kSignalBase + sig;
    }

    std::optional<uint16_t> listen_;
};

}  // namespace

CliCommandPtr add_mesh_telemetry_command(CLI::App& app, bool& as_json) {
    return std::make_shared<MeshTelemetry>(app, as_json);
}

}  // namespace fabricctl
