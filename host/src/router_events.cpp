#include "fabric/router_events.h"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <cstring>
#include <ctime>

#include "fabric/error.h"
#include "fabric/fabric_runner.h"

namespace fabric {

namespace pf = protocol::fabric;

namespace {

using Kind = pf::RouterEventKind;

bool is(const RouterEventRecord& r, Kind k) {
    return r.lost == 0 && r.event.kind == static_cast<uint16_t>(k);
}

// Link health records name the peer's end of the link (link_watch.h).
bool is_link_health(const RouterEventRecord& r) {
    return is(r, Kind::LinkDown) || is(r, Kind::LinkUp) || is(r, Kind::PeerSilent) ||
           is(r, Kind::PeerHeard);
}

std::string describe_link_health(const RouterEventRecord& r) {
    const pf::RouterEvent& e = r.event;
    const std::string peer = fmt::format("peer chip {} eth {}", e.value, e.channel);
    if (is(r, Kind::PeerSilent)) {
        return fmt::format("peer_silent: {} not heard for {} cycles", peer, e.code);
    }
    if (is(r, Kind::PeerHeard)) {
        return fmt::format("peer_heard: {} heard again after {} cycles", peer, e.code);
    }
    return fmt::format("{}: link to {} (status word {})", event_kind_name(r), peer, hex32(e.code));
}

// A stop (Timeout, Fault, ConfigInvalid, ...): where it was and the status detail by name.
std::string describe_state(const pf::RouterEvent& e) {
    std::string out = "state " + router_status_name(e.code);
    if (e.channel != 0) out += " at " + router_wait_name(e.channel);
    if (router_status_is_error(e.code) && e.value != 0) {  // 0: a wait of its own ran out
        out += fmt::format(" ({})", router_detail_name(e.code, e.value));
    }
    return out;
}

// "2026-11-26T16:30:00.123Z"
std::string utc_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    std::array<char, 32> buf{};
    std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:03}Z", buf.data(), ms);
}

}  // namespace

std::string event_kind_name(const RouterEventRecord& r) {
    if (r.lost != 0) return "lost";
    if (const char* name = pf::code_name(pf::kRouterEventKindNames, r.event.kind)) return name;
    return fmt::format("unknown({})", hex32(r.event.kind));
}

std::string describe_event(const RouterEventRecord& r) {
    if (r.lost != 0) {
        return fmt::format("lost {} event{} (log full)", r.lost, r.lost == 1 ? "" : "s");
    }
    const pf::RouterEvent& e = r.event;
    if (is(r, Kind::State)) return describe_state(e);
    if (is(r, Kind::BadPacket)) {
        return fmt::format("bad_packet {} on rx{} (seq {})", bad_packet_name(e.code), e.channel,
                           e.value);
    }
    if (is_link_health(r)) return describe_link_health(r);
    if (is(r, Kind::Stalled)) {
        const std::string on = e.code == pf::kStalledOnNoc
                                   ? std::string("the NoC to take its delivery")
                                   : fmt::format("port {}", e.code);
        return fmt::format("stalled: the packet at the head of rx{} waits for {} (seq {})",
                           e.channel, on, e.value);
    }
    if (is(r, Kind::Unacked)) {
        return fmt::format("unacked: ch{} sent position {} on the cut link (seq {})", e.channel,
                           e.code, e.value);
    }
    if (is(r, Kind::Unsent)) {
        return fmt::format("unsent: ch{} dropped, {} (seq {})", e.channel, bad_packet_name(e.code),
                           e.value);
    }
    if (is(r, Kind::NotAccepted)) {
        return fmt::format(
            "not_accepted: core {}-{} does not accept the delivery at the head of rx{} (seq {})",
            e.code & 0xFF, e.code >> 8, e.channel, e.value);
    }
    if (is(r, Kind::Accepted)) {
        return fmt::format("accepted: rx{}'s delivery went after all (seq {})", e.channel, e.value);
    }
    return fmt::format("{} channel {} code {} value {}", event_kind_name(r), e.channel,
                       hex32(e.code), hex32(e.value));
}

nlohmann::json event_json(const RouterEventRecord& r) {
    nlohmann::json j{{"kind", event_kind_name(r)}, {"cycle", r.collected_cycle}};
    if (r.lost != 0) {
        j["lost"] = r.lost;
        return j;
    }
    const pf::RouterEvent& e = r.event;
    j["router_time"] = e.time;
    if (is(r, Kind::State)) {
        j["status"] = router_status_name(e.code);
        if (e.channel != 0) j["where"] = router_wait_name(e.channel);
        if (router_status_is_error(e.code) && e.value != 0) {
            j["detail"] = router_detail_name(e.code, e.value);
        }
    } else if (is(r, Kind::BadPacket)) {
        j["reason"] = bad_packet_name(e.code);
        j["channel"] = e.channel;
        j["seq"] = e.value;
    } else if (is(r, Kind::Stalled)) {
        j["channel"] = e.channel;
        j["port"] = e.code;
        j["seq"] = e.value;
    } else if (is(r, Kind::Unacked)) {
        j["channel"] = e.channel;
        j["position"] = e.code;
        j["seq"] = e.value;
    } else if (is(r, Kind::Unsent)) {
        j["channel"] = e.channel;
        j["reason"] = bad_packet_name(e.code);
        j["seq"] = e.value;
    } else if (is(r, Kind::NotAccepted) || is(r, Kind::Accepted)) {
        j["channel"] = e.channel;
        if (is(r, Kind::NotAccepted)) j["core"] = fmt::format("{}-{}", e.code & 0xFF, e.code >> 8);
        j["seq"] = e.value;
    } else if (is_link_health(r)) {
        j["peer_chip"] = e.value;
        j["peer_eth"] = e.channel;
        j[is(r, Kind::PeerSilent) || is(r, Kind::PeerHeard) ? "cycles" : "status_word"] = e.code;
    } else {
        j["channel"] = e.channel;
        j["code"] = e.code;
        j["value"] = e.value;
    }
    return j;
}

RouterEventReader::RouterEventReader(const FabricPlan& plan)
    : plan_(plan), consumed_(plan.routers.size(), 0), dropped_seen_(plan.routers.size(), 0) {}

std::vector<RouterEventRecord> RouterEventReader::collect(Device& device) {
    std::vector<RouterEventRecord> out;
    const uint64_t now = device.cycles();
    for (size_t i = 0; i < plan_.routers.size(); ++i) {
        const RouterPlacement& r = plan_.routers[i];
        pf::RouterEventLog head{};
        device.read(r.core, r.layout.events,
                    {reinterpret_cast<uint8_t*>(&head), offsetof(pf::RouterEventLog, records)});
        if (head.capacity != pf::kRouterEventRecords) continue;
        // The router starts counting at 0 again when it restarts: so does the host.
        if (head.written < consumed_[i]) consumed_[i] = dropped_seen_[i] = 0;
        const uint32_t fresh = head.written - consumed_[i];
        if (fresh > pf::kRouterEventRecords) {
            fail(ErrorCategory::Fabric, "{}: event log says {} records unread, more than its {}",
                 router_component_name(r), fresh, pf::kRouterEventRecords);
        }
        if (fresh != 0) {
            // The whole ring in one read (one device access, not one per record).
            std::array<pf::RouterEvent, pf::kRouterEventRecords> ring{};
            device.read(r.core, r.layout.events + offsetof(pf::RouterEventLog, records),
                        {reinterpret_cast<uint8_t*>(ring.data()), sizeof ring});
            for (uint32_t k = 0; k < fresh; ++k) {
                out.push_back({.router = i,
                               .collected_cycle = now,
                               .event = ring[(consumed_[i] + k) % pf::kRouterEventRecords]});
            }
        }
        if (head.dropped != dropped_seen_[i]) {
            const uint32_t n = head.dropped - dropped_seen_[i];
            out.push_back({.router = i, .collected_cycle = now, .lost = n});
            lost_ += n;
            dropped_seen_[i] = head.dropped;
        }
        if (fresh != 0) {
            consumed_[i] = head.written;
            device.write32(r.core, r.layout.events + offsetof(pf::RouterEventLog, consumed),
                           consumed_[i]);
            collected_ += fresh;
        }
    }
    return out;
}

EventLogFile::EventLogFile(const std::string& path) : path_(path), out_(path, std::ios::trunc) {
    if (!out_) fail(ErrorCategory::BadInput, "--events {}: cannot create the file", path);
}

void EventLogFile::append(std::span<const RouterEventRecord> records, const FabricPlan& plan) {
    if (records.empty()) return;
    const std::string t = utc_now();
    for (const RouterEventRecord& r : records) {
        const RouterPlacement& p = plan.routers.at(r.router);
        nlohmann::json j{{"host_time", t},
                         {"router", router_component_name(p)},
                         {"chip", p.chip},
                         {"eth", p.eth_channel},
                         {"text", describe_event(r)}};
        j.update(event_json(r));
        out_ << j.dump() << '\n';
    }
    flush();
}

void EventLogFile::append_host(const std::string& text, const nlohmann::json& fields) {
    nlohmann::json j{{"host_time", utc_now()}, {"router", "host"}, {"text", text}};
    j.update(fields);
    out_ << j.dump() << '\n';
    flush();
}

void EventLogFile::flush() {
    out_.flush();
    if (!out_) fail(ErrorCategory::BadInput, "--events {}: cannot write the file", path_);
}

}  // namespace fabric
