// Per-flow accounting of traffic run over a fabric (1D fabric_traffic.h, 2D mesh_traffic.h): for
// every flow, the packets its worker sent, those its sink counted as delivered, and those routers
// dropped and reported (BadPacket events, whose seq word names the flow and the packet:
// protocol::traffic_seq). What is left is lost: sent but neither delivered nor reported dropped.
// More delivered and dropped than sent is a duplicate. Pure: the inputs are the workers'
// outcomes, the sinks' counters and the routers' event records, gathered by the caller.
//
//   DropLog          the drops of a run, from event records as the runner collects them, each
//                    with the router (chip, Ethernet channel) that dropped it; records a router
//                    could not write (its log was full) are counted, since drops may hide there.
//   account_traffic  the account of every flow, and the drops that name no flow of the run.
//   account_problems one line per thing wrong (lost, duplicated, dropped, unrecorded, stray).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fabric/fabric_plan.h"
#include "fabric/router_events.h"

namespace fabric {

// One packet a router dropped and reported.
struct PacketDrop {
    ChipId chip = 0;           // the router that dropped it
    uint32_t eth_channel = 0;  // ... on this chip
    uint32_t reason = 0;       // protocol::fabric::BadPacket
    uint32_t rx_channel = 0;   // the receiver channel it arrived on
    uint32_t seq = 0;          // its header's seq (protocol::traffic_seq)
    // A drop on the sending side of a link a drain cut (Unsent, Unacked): the packet reached this
    // router's chip (delivered there, if that is a destination) and not this chip, the peer's:
    // it counts for the flows whose drop chips include this one.
    std::optional<ChipId> short_of;
};

// A packet sent on a link that a drain cut, never completed by the peer (an Unacked event).
struct UnackedPacket {
    ChipId chip = 0;              // the router that sent it
    uint32_t eth_channel = 0;     // ... on this chip
    ChipId peer_chip = 0;         // the chip at the other end of the link
    uint32_t sender_channel = 0;  // its sender channel
    uint32_t position = 0;        // its position on the link (0, 1, ... on that channel)
    uint32_t seq = 0;
};

struct DropLog {
    std::vector<PacketDrop> drops;
    uint64_t unrecorded = 0;             // event records the routers could not write (log full)
    std::vector<UnackedPacket> unacked;  // not resolved yet (resolve_unacked)
    // Reported NotAccepted and not Accepted (yet): drops (BadPacket NotAccepted) in the account.
    std::vector<PacketDrop> not_accepted;

    // The BadPacket, Unsent, Unacked, NotAccepted and Accepted events and lost-record entries of
    // `records` (routers of `plan`).
    void add(std::span<const RouterEventRecord> records, const FabricPlan& plan);
    // Decide every unacked packet with `peer_taken`: how many packets the router at the other end
    // of its link took from its sender channel (that router's RouterControlReport::taken), or
    // nullopt when nobody can say. Below that count the peer took it (it was delivered there, or
    // went on and is accounted for further on); from it on it was not: a drop, BadPacket Unacked,
    // by the sender. An undecided one stays in `unacked` (the account counts it lost).
    void resolve_unacked(
        const std::function<std::optional<uint32_t>(const UnackedPacket&)>& peer_taken);
};

// resolve_unacked's peer_taken from every router's snapshot (FabricRunner::status(), in plan
// order, after the drain): the count of the router at the other end of the link, once that
// router cut the link too or terminated (it takes nothing more from it); nullopt otherwise.
struct RouterSnapshot;
std::function<std::optional<uint32_t>(const UnackedPacket&)> taken_by_peers(
    const FabricPlan& plan, std::vector<RouterSnapshot> routers);

// After traffic with FabricRunner::drain_on_link_down: wait (within `timeout_cycles`) until the
// routers it drained have reached Drain (everything on their cut links reported; the runner's
// event sink, which must feed `drops`, gets the last records), then resolve_unacked with their
// counts. Nothing when it drained none. Error(Fabric) from FabricRunner::control.
class FabricRunner;
void resolve_link_down_drains(FabricRunner& runner, DropLog& drops, uint64_t timeout_cycles);

// After termination: the unacked packets still undecided (a link that died after the traffic, cut
// by the drain that FabricRunner::terminate started) decided with the routers' final counts.
void resolve_unacked_after_termination(const FabricRunner& runner, DropLog& drops,
                                       std::vector<RouterSnapshot> final_snapshots);

// What a flow's worker and sink said.
struct FlowTally {
    std::string name;        // how the report names it, e.g. "0:1 -> 0:5 plane 0"
    uint32_t id = 0;         // the flow in its packets' seq words (protocol::traffic_seq_flow)
    uint64_t sent = 0;       // packets the worker pushed (its outcome's packets_sent)
    uint64_t delivered = 0;  // packets its sink counted
    // Only drops by routers on these chips are this flow's (a 1D multicast to chips 1, 2, 3: the
    // flow to chip 3 counts the drops on chips 1 to 3, the one to chip 1 only chip 1's, since a
    // packet dropped on chip 2 had landed on chip 1). Empty: any router's.
    std::vector<ChipId> drop_chips;
};

// The packets of one flow that one router dropped for one reason, in the order reported.
struct DropGroup {
    ChipId chip = 0;
    uint32_t eth_channel = 0;
    uint32_t reason = 0;
    std::vector<uint32_t> packets;  // indices in the flow (protocol::traffic_seq_index)
};

struct FlowAccount {
    FlowTally tally;
    uint64_t dropped = 0;
    // Reported not accepted and never accepted while its router watched (DropLog::not_accepted),
    // yet delivered: it landed after the fabric ended (its destination accepted late). Counted
    // delivered, not dropped; at most the flow's not-accepted packets, and only what its sink
    // counted beyond the others.
    uint64_t landed_late = 0;
    uint64_t lost = 0;        // sent - delivered - dropped, when positive
    uint64_t duplicated = 0;  // delivered + dropped - sent, when positive
    std::vector<DropGroup> drops;

    bool all_delivered() const { return tally.delivered == tally.sent && dropped == 0; }
};

struct TrafficAccount {
    std::vector<FlowAccount> flows;  // in the order of the tallies
    uint64_t sent = 0, delivered = 0, dropped = 0, lost = 0, duplicated = 0;
    std::vector<PacketDrop> strays;  // drops whose seq names no flow (or no router on its way)
    uint64_t unrecorded = 0;         // DropLog::unrecorded

    // Every packet sent was delivered, and nothing else happened.
    bool all_delivered() const;
    // Nothing lost or duplicated and every drop attributed (dropped packets are accounted for).
    bool accounted() const;
    size_t flows_not_delivered() const;
};

// The account of `flows` given the drops the routers reported. A drop counts for every tally
// with its flow id whose drop chips include the router's (a 1D multicast's flows to the chips
// past it); one that counts for none is a stray.
TrafficAccount account_traffic(std::span<const FlowTally> flows, const DropLog& drops);

// "route at chip 1 eth 8: 3 packets (0, 2, 5)": every group of a flow's drops, "; "-separated;
// at most the first 8 indices of a group are listed ("... and 12 more").
std::string describe_drops(const FlowAccount& flow);

// Appends what is wrong, one line each, the weightiest first: per flow with lost packets
// "flow F: N of S packets lost (delivered D, dropped X)", per flow with duplicates "flow F: N
// packets duplicated (sent S, delivered D, dropped X)" (8 flows of each, then "K more flows with
// P packets lost|duplicated (see the account)"), "N event records not written (router log
// full): drops may be missing from the account", "N dropped packets name no flow of this run
// (first: seq 0x..., reason R at chip C eth E)", then one line for the drops accounted for
// ("N packets dropped by routers in F flows (all accounted for)").
void account_problems(const TrafficAccount& account, std::vector<std::string>& problems);

// The totals line: "account: F flows, S sent, D delivered, X dropped, L lost" (", U duplicated"
// when there are any).
std::string account_totals(const TrafficAccount& account);

// The text report: a table of the flows with anything not delivered (flow, sent, delivered,
// dropped, lost, duplicated, the drops as describe_drops says them; no table when every flow
// was delivered), then the totals line, then one line each for strays and unrecorded records.
// A 1,000-flow run that went well is one line.
std::vector<std::string> account_table(const TrafficAccount& account);

// Everything: totals, every flow (name, id, sent, delivered, dropped, lost, duplicated, drops
// with reason name, chip, eth and packet indices), strays, unrecorded.
nlohmann::json account_json(const TrafficAccount& account);

}  // namespace fabric
