// What `mesh run` sends (MeshRunArgs, its options beside the fabric's), and the record of one run
// that `mesh run --record FILE` writes and `mesh replay FILE` runs again (seeds/000 §7.5.1).
//
// A record is one JSON document, self-contained: the descriptors' text as they were read (so a
// replay needs no file of the recording machine), every option that decides what happens (the
// mapping, planes, payload, slots, timeouts, the traffic, the faults and their seed, the reaction
// to a dead link), and what the run gave: every flow's account (sent, delivered, dropped by which
// router for which reason, which packets). A replay plans the same fabric and traffic from it,
// runs them (the model, a sim server or PCIe; faults only in the model) and must give the same
// account, flow by flow.
//
//   {"format": "erisc-fabric traffic record", "version": 1,
//    "mesh_graph": {"path": P, "text": T} | null (derived from the cluster),
//    "cluster": {"path": P, "text": T}, "soc": {"path": P, "text": T} | null,
//    "pins": [...], "topology": "mesh", "planes": "0", "payload": 0, "slots": "",
//    "stall_cycles": 0, "packet_timeout_us": 0, "packet_timeout_action": "drop",
//    "packets": 16, "bytes": 1024, "send_type": "fused-write-atomic-inc",
//    "faults": [SPEC...], "fault_seed": 1, "on_link_down": "drain-after-grace",
//    "reliability": "relaxed" (optional: relaxed),
//    "flows": [{"id", "name", "sent", "delivered", "dropped",
//               "drops": [{"chip", "eth_channel", "reason", "packets": [...]}]}]}
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fabric/traffic_account.h"
#include "fabric_common.h"
#include "fault_option.h"
#include "mesh_session.h"
#include "packet_trace_option.h"

namespace fabricctl {

// `mesh run`'s own options.
struct MeshRunArgs {
    uint32_t packets = 16;
    uint32_t bytes = 1024;
    std::string send_type = "fused-write-atomic-inc";
    std::string worker_elf;
    FaultArgs faults;
    PacketTraceArgs trace;  // --trace-packets (not recorded)
    LinkDownArgs link_down;
    std::string page;    // --page FILE
    std::string record;  // --record FILE

    void add_options(CLI::App& cmd);
};

struct RecordedText {
    std::string path;  // as given when recorded
    std::string text;
};

struct TrafficRecord {
    std::optional<RecordedText> mesh_graph;  // nullopt: derived from the cluster
    RecordedText cluster;
    std::optional<RecordedText> soc;
    std::vector<std::string> pins;
    std::string topology = "mesh";
    std::string planes = "0";
    uint32_t payload = 0;
    std::string slots;
    uint64_t stall_cycles = 0;
    uint32_t packet_timeout_us = 0;
    std::string packet_timeout_action = "drop";
    MeshRunArgs run;  // traffic, faults, link_down (page and record left empty)
    std::vector<fabric::FlowAccount> flows;
};

// The record of a run of `run` over the fabric of `args` that ended with `account` (the
// descriptors read again from their paths). Error(BadInput) for a descriptor it cannot read.
TrafficRecord record_of(const MeshFabricArgs& args, const MeshRunArgs& run,
                        const fabric::TrafficAccount& account);

nlohmann::json record_json(const TrafficRecord& r);
// Error(BadInput) "<path>: <field>: ..." for a document that is not a record of this version.
TrafficRecord parse_traffic_record(const nlohmann::json& j, const std::string& path);

// Write / read the file. Error(BadInput) naming the path when it cannot be written, read (at most
// kMaxRecordBytes), parsed or checked.
inline constexpr uint64_t kMaxRecordBytes = 64ull << 20;
void write_traffic_record(const std::string& path, const TrafficRecord& r);
TrafficRecord read_traffic_record(const std::string& path);

// The fabric of a replay: the record's descriptors written under `dir` (their original file
// names, so their format is recognised), its options, and the target options of the replay
// (`target` already holds --target, --socket, --dir, the budget, threads, firmware, output).
MeshFabricArgs replay_fabric_args(const TrafficRecord& r, const std::string& dir,
                                  MeshFabricArgs target);

// One line per flow whose account differs from the recorded one (a flow missing on either side
// included): "replay: flow M0D0 -> M0D1 plane 0: delivered 15, recorded 16 (sent 16 / 16,
// dropped 1 / 0)", "replay: flow ...: drops ..., recorded ...". Empty: the same account.
std::vector<std::string> record_differences(const TrafficRecord& r,
                                            const fabric::TrafficAccount& account);

}  // namespace fabricctl
