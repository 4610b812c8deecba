#include "socket_run_cmd.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fabric/error.h"
#include "fabric/launch.h"
#include "fabric/socket_plan.h"
#include "fabric/traffic_verdict.h"
#include "mesh_session.h"
#include "protocol/socket.h"

namespace fabricctl {

namespace {

namespace pf = protocol::fabric;
using fabric::ErrorCategory;
using fabric::SocketSide;
using nlohmann::json;

CLI::App& socket_group(CLI::App& app) {
    return command_group(app, "socket", "Sockets over the fabric: flow-controlled send/receive");
}

// CHIP or CHIP:CORE (x-y); without CORE the chip's first worker core (harvesting applied).
fabric::CoreLocation parse_end(const std::string& option, const std::string& text,
                               const fabric::HarvestedSocs& socs) {
    const size_t colon = text.find(':');
    const std::string chip_text = text.substr(0, colon);
    uint32_t chip = 0;
    try {
        size_t used = 0;
        chip = static_cast<uint32_t>(std::stoul(chip_text, &used));
        if (used != chip_text.size()) throw std::invalid_argument(chip_text);
    } catch (const std::exception&) {
        fabric::fail(ErrorCategory::BadInput, "{} {}: expected CHIP or CHIP:X-Y", option, text);
    }
    if (colon == std::string::npos) {
        const auto& workers = socs(chip).cores(fabric::CoreType::Worker);
        if (workers.empty())
            fabric::fail(ErrorCategory::BadInput, "{}: chip {} has no worker core", option, chip);
        return {chip, workers.front()};
    }
    const auto core = fabric::parse_core_coord(text.substr(colon + 1));
    if (!core)
        fabric::fail(ErrorCategory::BadInput, "{} {}: expected CHIP or CHIP:X-Y", option, text);
    return {chip, *core};
}

fabric::MeshWorkerOutcome as_outcome(const fabric::SocketEndOutcome& o) {
    fabric::MeshWorkerOutcome out;
    out.launch = o.launch;
    out.status = o.status;
    out.stuck_at = o.stuck_at;
    return out;
}

class SocketRunCommand final : public MeshFabricCommand {
  public:
    SocketRunCommand(CLI::App& app, bool& as_json)
        : MeshFabricCommand(InGroup{socket_group(app)}, as_json, "run",
                            "Bring the fabric up, stream bytes through a socket from one worker "
                            "core to another (flow controlled by acknowledgements), check every "
                            "byte, terminate") {
        cmd_->add_option("--from", from_, "Sender: CHIP or CHIP:X-Y (a worker core)")->required();
        cmd_->add_option("--to", to_, "Receiver: CHIP or CHIP:X-Y (a worker core)")->required();
        add_bytes_option(*cmd_, o_.bytes, "Bytes to stream (multiple of 16)")
            ->capture_default_str();
        cmd_->add_option("--page-bytes", o_.page_bytes, "Bytes per page (multiple of 16)")
            ->capture_default_str();
        cmd_->add_option("--ring-pages", o_.ring_pages, "Pages of the receiver's ring")
            ->capture_default_str();
        cmd_->add_option("--consume-delay", o_.consume_delay,
                         "Receiver: cycles per page before it is acknowledged (a slow receiver)")
            ->capture_default_str();
        cmd_->add_option("--close-after", o_.close_after,
                         "Close after this many pages (0: stream everything)")
            ->capture_default_str();
        cmd_->add_option("--close-from", close_from_, "The side that closes: sender or receiver")
            ->check(CLI::IsMember({"sender", "receiver"}))
            ->capture_default_str();
        cmd_->add_option("--plane", o_.plane, "Routing plane of both routes")
            ->capture_default_str();
        cmd_->add_option("--worker-elf", worker_elf_,
                         "Socket kernel (default: this build's socket_stream.elf)");
    }

    int run() const override {
        MeshSession s(args_, "run", as_json_, "socket");
        fabric::MeshFabricOptions mo = s.fabric_options();
        mo.payload_bytes = s.payload_bytes(pf::kDefaultPayloadBytes);  // a larger page is split
        s.plan_fabric(mo);
        s.load_router_image();
        const TrafficKernel kernel = load_worker_kernel(worker_elf_, s.soc(), "socket_stream");
        const fabric::HarvestedSocs socs(s.soc(), s.cluster());
        fabric::SocketOptions o = o_;
        o.close_from = *fabric::parse_socket_side(close_from_);
        o.timeout_us = fabric::traffic_timeout_us(s.budget(), s.arch());
        const fabric::SocketPlan plan =
            fabric::plan_socket(s.plan(), std::cref(socs), kernel.image,
                                parse_end("--from", from_, socs), parse_end("--to", to_, socs), o);
        s.open_device(0);
        return s.run_interruptible([&] {
            s.bring_up();
            s.show_stage("socket");
            fabric::LaunchOptions lo;
            lo.max_cycles = s.cycles_left();
            lo.poll_cycles = 1'000;
            const fabric::SocketRun run = fabric::run_socket(s.runner(), plan, lo);
            for (auto& p : fabric::socket_problems(plan, run)) s.problems.push_back(std::move(p));
            if (s.problems.empty()) s.runner().check_health();
            s.terminate();
            const uint32_t consumed = run.receiver.results.bytes_consumed;
            const fabric::PatternCheck check = fabric::check_socket_output(
                s.device(), plan, std::min(consumed, plan.options.bytes));
            if (check.bad_words != 0) {
                s.problems.push_back(fmt::format(
                    "the receiver's output: {} words differ from the stream, the first at byte {}",
                    check.bad_words, check.first_bad));
            }
            return report(s, plan, run, kernel.path);
        });
    }

  private:
    int report(MeshSession& s, const fabric::SocketPlan& plan, const fabric::SocketRun& run,
               const std::string& kernel_path) const {
        const auto& tx = run.sender.results;
        const auto& rx = run.receiver.results;
        const double rate = bytes_per_cycle(rx.bytes_consumed, tx.cycles);
        const std::vector<fabric::MeshWorkerOutcome> outcomes{as_outcome(run.sender),
                                                              as_outcome(run.receiver)};
        RunReport r;
        r.passed = fmt::format(
            "socket run passed: {} B in {} pages of {} B from {} to {}, {} cycles, {:.3f} "
            "B/cycle; every byte checked; {}",
            rx.bytes_consumed, rx.pages, plan.options.page_bytes, plan.sender.target.core.str(),
            plan.receiver.target.core.str(), tx.cycles, rate, s.ending());
        r.outcomes = outcomes;
        r.add_json = [&](json& j) {
            j["worker_firmware"] = kernel_path;
            j["socket"] = {{"from", end_json(plan.sender, run.sender)},
                           {"to", end_json(plan.receiver, run.receiver)},
                           {"bytes", plan.options.bytes},
                           {"page_bytes", plan.options.page_bytes},
                           {"ring_pages", plan.options.ring_pages},
                           {"consume_delay", plan.options.consume_delay},
                           {"close_after", plan.options.close_after},
                           {"close_from", close_from_},
                           {"plane", plan.options.plane},
                           {"source_bytes", plan.source_bytes()},
                           {"cycles", tx.cycles},
                           {"bytes_per_cycle", rate},
                           {"every_byte_checked", s.problems.empty()}};
        };
        r.print_body = [&] {
            fmt::print("socket {} -> {}: {} hops there, {} back, plane {}\n",
                       plan.sender.target.core.str(), plan.receiver.target.core.str(),
                       plan.sender.hops, plan.receiver.hops, plan.options.plane);
            fmt::print("stream: {} B in {} pages of {} B, ring {} pages ({} B), consume delay {}\n",
                       plan.options.bytes, plan.pages(), plan.options.page_bytes,
                       plan.options.ring_pages, plan.ring_bytes(), plan.options.consume_delay);
            print_end(run.sender, fmt::format("sender: sent {} B ({} pages), acknowledged {} B",
                                              tx.bytes_sent, tx.pages, tx.bytes_acked));
            print_end(run.receiver, fmt::format("receiver: consumed {} B ({} pages), received {} B",
                                                rx.bytes_consumed, rx.pages, rx.bytes_received));
            if (run.sender.passed() && run.receiver.passed()) {
                fmt::print("rate: {:.3f} B/cycle ({} B in {} cycles)\n", rate, rx.bytes_consumed,
                           tx.cycles);
            }
            if (s.problems.empty())
                fmt::print("every byte checked: {} B of output equal the stream\n",
                           rx.bytes_consumed);
            s.print_terminated("");
        };
        return s.report(r);
    }

    // An end's line: what it did and how it ended, or, for an end that did not finish, how far
    // it got (the pages it published: it does every 16) and where it is.
    static void print_end(const fabric::SocketEndOutcome& o, const std::string& what) {
        const auto& r = o.results;
        if (o.passed()) {
            fmt::print("{}, {}, {} cycles\n", what, fabric::socket_end_name(r.end), r.cycles);
            return;
        }
        fmt::print(
            "{}: {} after {} pages or more (status 0x{:08x}, stuck_at 0x{:x}, socket status "
            "{})\n",
            what.substr(0, what.find(':')), fabric::outcome_name(o.launch.outcome), r.pages,
            o.status, o.stuck_at, fabric::socket_status_name(r.socket_status));
    }

    static json end_json(const fabric::SocketEndPlan& e, const fabric::SocketEndOutcome& o) {
        const auto& r = o.results;
        return {{"chip", e.target.core.chip},
                {"core", e.target.core.core.str()},
                {"hops", e.hops},
                {"outcome", fabric::outcome_name(o.launch.outcome)},
                {"status", o.status},
                {"stuck_at", o.stuck_at},
                {"socket_status", fabric::socket_status_name(r.socket_status)},
                {"end", fabric::socket_end_name(r.end)},
                {"pages", r.pages},
                {"bytes_sent", r.bytes_sent},
                {"bytes_acked", r.bytes_acked},
                {"bytes_received", r.bytes_received},
                {"bytes_consumed", r.bytes_consumed},
                {"cycles", r.cycles}};
    }

    std::string from_, to_;
    std::string close_from_ = "sender";
    std::string worker_elf_;
    fabric::SocketOptions o_;
};

}  // namespace

CliCommandPtr add_socket_run_command(CLI::App& app, bool& as_json) {
    return std::make_shared<SocketRunCommand>(app, as_json);
}

}  // namespace fabricctl
