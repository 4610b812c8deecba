// --trace-packets FILE and --trace-max-records N of `fabric run` and `mesh run` (the model only):
// a packet timeline of the run in the Chrome trace-event format (fabric/packet_trace.h), recorded
// from the moment the model is open (bring-up included) to the end of termination, then written
// to FILE; ui.perfetto.dev or chrome://tracing open it. What it holds is logged on stderr, and
// the cap's message when observations were left out.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "fabric/fabric_plan.h"
#include "fabric/interrupt.h"
#include "fabric/packet_trace.h"

namespace fabricctl {

struct PacketTraceArgs {
    std::string path;
    uint64_t max_records = fabric::PacketTrace::kDefaultMaxRecords;

    void add_options(CLI::App& cmd);
};

class PacketTraceFile {
  public:
    // Recording on `device` from now on; nullptr without --trace-packets. Error(Unsupported) when
    // `device` is not the model of this process (silicon, or a `sim serve` server's model).
    static std::unique_ptr<PacketTraceFile> start(const PacketTraceArgs& args,
                                                  const fabric::FabricPlan& plan,
                                                  fabric::InterruptibleDevice& device);
    ~PacketTraceFile();

    // Stop recording and write the file (Error(BadInput) if it cannot be written).
    void write();

  private:
    struct Recording;
    explicit PacketTraceFile(std::string path, std::unique_ptr<Recording> r);
    std::string path_;
    std::unique_ptr<Recording> recording_;
};

}  // namespace fabricctl
