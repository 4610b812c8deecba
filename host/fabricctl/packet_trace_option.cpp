#include "packet_trace_option.h"

#include <fmt/format.h>

#include <fstream>

#include "cli_common.h"
#include "fabric/error.h"
#ifdef FABRIC_HAVE_SIM
#include "fabric/sim_device.h"
#include "fabric/sim_packet_tap.h"
#endif

namespace fabricctl {

using fabric::ErrorCategory;

void PacketTraceArgs::add_options(CLI::App& cmd) {
    cmd.add_option("--trace-packets", path,
                   "Write a packet timeline of the run to this file (Chrome trace-event JSON: "
                   "open it in ui.perfetto.dev or chrome://tracing); the model only");
    cmd.add_option("--trace-max-records", max_records,
                   "Most observations the packet trace keeps; later ones are counted and left "
                   "out (default 1000000)")
        ->check(CLI::PositiveNumber);
}

#ifdef FABRIC_HAVE_SIM
struct PacketTraceFile::Recording {
    fabric::PacketTrace trace;
    std::unique_ptr<fabric::PacketTraceTap> tap;
    Recording(const fabric::FabricPlan& plan, uint64_t max_records, fabric::SimDevice& device)
        : trace(plan, max_records), tap(std::make_unique<fabric::PacketTraceTap>(device, trace)) {}
};
#else
struct PacketTraceFile::Recording {};
#endif

std::unique_ptr<PacketTraceFile> PacketTraceFile::start(const PacketTraceArgs& args,
                                                        const fabric::FabricPlan& plan,
                                                        fabric::InterruptibleDevice& device) {
    if (args.path.empty()) return nullptr;
#ifdef FABRIC_HAVE_SIM
    if (auto* model = dynamic_cast<fabric::SimDevice*>(&device.inner())) {
        return std::unique_ptr<PacketTraceFile>(new PacketTraceFile(
            args.path, std::make_unique<Recording>(plan, args.max_records, *model)));
    }
#else
    (void)plan;
    (void)device;
#endif
    fabric::fail(ErrorCategory::Unsupported,
                 "--trace-packets {}: packet traces are recorded in the model of this process "
                 "(--target sim without a server), not on {}",
                 args.path, device.description());
}

PacketTraceFile::PacketTraceFile(std::string path, std::unique_ptr<Recording> r)
    : path_(std::move(path)), recording_(std::move(r)) {}

PacketTraceFile::~PacketTraceFile() = default;

void PacketTraceFile::write() {
#ifdef FABRIC_HAVE_SIM
    recording_->tap.reset();
    const fabric::PacketTimeline t = recording_->trace.timeline();
    std::ofstream out(path_, std::ios::binary);
    fabric::write_chrome_trace(out, t);
    if (!out.flush()) {
        fabric::fail(ErrorCategory::BadInput, "--trace-packets {}: cannot write the file", path_);
    }
    log_line(fmt::format(
        "packet trace: {} events of {} packets on {} tracks, {} flows, written to {} (open it in "
        "ui.perfetto.dev or chrome://tracing)",
        t.events.size(), t.packets.size(), t.tracks.size(), t.flows.size(), path_));
    if (const auto cap = fabric::trace_cap_message(t)) log_line(*cap + " (--trace-max-records)");
#endif
}

}  // namespace fabricctl
