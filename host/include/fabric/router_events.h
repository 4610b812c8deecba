// The host side of the routers' event logs (protocol/fabric.h RouterEventLog): collect what every
// router recorded since the last look, say what it means, and keep it in a persistent log.
//
//   RouterEventReader  per router the records it has read; collect() reads the new ones of every
//                      router over the Device and acknowledges them (`consumed`), so the router
//                      has room again. Records the router could not write (its log was full)
//                      come back as one record with `lost` set, where they would have been.
//   describe_event     one line: "state ready_for_traffic", "bad_packet magic on rx0 (seq 7)",
//                      "state timeout at handshake_reply (hal:timeout)", "lost 8 events (log
//                      full)".
//   EventLogFile       JSON lines, one file per bring-up (created anew), each record with the host
//                      time, the device cycle it was collected at, the router and the event; the
//                      host's own records (faults applied) say "router": "host".
#pragma once

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "fabric/device.h"
#include "fabric/fabric_plan.h"
#include "protocol/fabric.h"

namespace fabric {

struct RouterEventRecord {
    size_t router = 0;             // index into the plan's routers
    uint64_t collected_cycle = 0;  // the device's cycles when the host read it
    // What the router wrote; when `lost` is non-zero, nothing (kind 0): the router had no room
    // for `lost` records since the previous collection.
    protocol::fabric::RouterEvent event{};
    uint32_t lost = 0;
};

// "state", "bad_packet"; "lost" for a lost-records entry; "unknown(0x...)" otherwise.
std::string event_kind_name(const RouterEventRecord& r);
std::string describe_event(const RouterEventRecord& r);
// The record's fields by name (kind, and per kind: status, where, detail, reason, channel, seq;
// lost), router time and collection cycle; not the router (the caller knows it).
nlohmann::json event_json(const RouterEventRecord& r);

class RouterEventReader {
  public:
    explicit RouterEventReader(const FabricPlan& plan);

    // Every router's new records, router by router, oldest first. A router whose log does not
    // have the protocol's capacity (not running our image yet, or never started) is skipped.
    std::vector<RouterEventRecord> collect(Device& device);
    // Records collected so far, and records the routers could not write.
    uint64_t collected() const { return collected_; }
    uint64_t lost() const { return lost_; }

  private:
    const FabricPlan& plan_;
    std::vector<uint32_t> consumed_;
    std::vector<uint32_t> dropped_seen_;
    uint64_t collected_ = 0;
    uint64_t lost_ = 0;
};

class EventLogFile {
  public:
    // Creates `path` anew (one file per bring-up); Error(BadInput) naming it if it cannot.
    explicit EventLogFile(const std::string& path);
    // One JSON line per record: {"host_time", "router", "chip", "eth", "text" (describe_event),
    // ...event_json}.
    // Error(Io-like: BadInput) if the file cannot be written.
    void append(std::span<const RouterEventRecord> records, const FabricPlan& plan);
    // One record of the host's own (e.g. a fault the model applied): {"host_time", "router":
    // "host", "text", ...fields}. `fields` must be an object.
    void append_host(const std::string& text, const nlohmann::json& fields);
    const std::string& path() const { return path_; }

  private:
    void flush();  // Error(BadInput) if what was written did not reach the file

    std::string path_;
    std::ofstream out_;
};

}  // namespace fabric
