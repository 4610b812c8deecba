// FaultInjector (fault_plan.h): every fault a timed action of the SimDevice, applied through the
// model's link hooks and the device's freeze/thaw.
#include <fmt/format.h>

#include "fabric/error.h"
#include "fabric/fault_plan.h"
#include "fabric/sim_device.h"
#include "sim/model/cluster.h"

namespace fabric {

namespace {

// splitmix64 finaliser: spreads (seed, chip, eth, direction) into unrelated streams, so two
// links (or two directions) never draw the same sequence of drops.
uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t drop_seed(uint64_t seed, const FaultSpec& f, sim::eth::Dir d) {
    return mix(mix(mix(seed) ^ f.chip) ^ (uint64_t{f.eth} << 1 | sim::eth::dir_index(d)));
}

}  // namespace

FaultInjector::FaultInjector(SimDevice& device, std::vector<FaultSpec> faults, uint64_t seed)
    : device_(device), faults_(std::move(faults)), seed_(seed) {
    for (const FaultSpec& f : faults_) {
        const bool known = f.chip < device_.cluster_descriptor().chip_count();
        check_fault(f, device_.cluster_descriptor(), device_.soc(known ? f.chip : 0),
                    device_.modeled_chips());
    }
}

void FaultInjector::arm(uint64_t traffic_start) {
    if (start_) return;
    start_ = traffic_start;
    for (const FaultSpec& f : faults_) schedule(f, traffic_start + f.at);
}

CoreLocation FaultInjector::eth_core(const FaultSpec& f) const {
    return {f.chip, device_.soc(f.chip).eth_core(f.eth)};
}

void FaultInjector::record(const FaultSpec& f, std::string change) {
    const uint64_t now = device_.cycles();
    log_.push_back({.kind = f.kind,
                    .chip = f.chip,
                    .eth = f.eth,
                    .core = f.core,
                    .change = std::move(change),
                    .device_cycle = now,
                    .traffic_cycle = now - *start_});
    if (sink_) sink_(log_.back());
}

void FaultInjector::schedule(const FaultSpec& f, uint64_t at) {
    sim::Cluster& model = device_.cluster();
    const uint32_t chip = *device_.model_chip_index(f.chip);
    switch (f.kind) {
        case FaultKind::LinkDown:
            device_.at_cycle(at, [this, &f, &model, chip] {
                model.link(chip, f.eth).set_up(false);
                record(f, "");
            });
            if (f.amount != 0) {
                device_.at_cycle(at + f.amount, [this, &f, &model, chip] {
                    model.link(chip, f.eth).set_up(true);
                    record(f, "up");
                });
            }
            break;
        case FaultKind::LinkFlap:
            schedule_flap(f, at, true);
            break;
        case FaultKind::LinkDrop:
            device_.at_cycle(at, [this, &f, &model, chip] {
                for (const sim::eth::Dir d : sim::eth::kDirs) {
                    model.link(chip, f.eth)
                        .set_drop_rate(d, static_cast<uint32_t>(f.amount), drop_seed(seed_, f, d));
                }
                record(f, fmt::format("{} ppm", f.amount));
            });
            break;
        case FaultKind::LinkDelay:
            device_.at_cycle(at, [this, &f, &model, chip] {
                model.link(chip, f.eth).set_extra_delay(static_cast<uint32_t>(f.amount));
                record(f, fmt::format("+{} cycles", f.amount));
            });
            break;
        case FaultKind::RouterStall:
            device_.at_cycle(at, [this, &f] {
                device_.freeze_core(eth_core(f));
                record(f, "frozen");
            });
            device_.at_cycle(at + f.amount, [this, &f] {
                device_.thaw_core(eth_core(f));
                record(f, "thawed");
            });
            break;
        case FaultKind::NocHold:
            device_.at_cycle(at, [this, &f] {
                device_.hold_noc_ejection({f.chip, f.core}, true);
                record(f, "");
            });
            if (f.amount != 0) {
                device_.at_cycle(at + f.amount, [this, &f] {
                    device_.hold_noc_ejection({f.chip, f.core}, false);
                    record(f, "released");
                });
            }
            break;
        default:
            fail(ErrorCategory::Internal, "fault '{}': kind {} has no schedule", f.text,
                 static_cast<int>(f.kind));
    }
}

std::vector<std::string> FaultInjector::drop_effects() {
    std::vector<std::string> out;
    for (const FaultSpec& f : faults_) {
        if (f.kind != FaultKind::LinkDrop || !start_ || device_.cycles() < *start_ + f.at) continue;
        const sim::eth::Link& link =
            device_.cluster().link(*device_.model_chip_index(f.chip), f.eth);
        uint64_t dropped = 0, resent = 0;
        for (const sim::eth::Dir d : sim::eth::kDirs) {
            dropped += link.stats(d).frames_dropped;
            resent += link.stats(d).frames_retransmitted;
        }
        out.push_back(fmt::format("{} chip {} eth {}: {} frames dropped, {} resent (seed {})",
                                  fault_kind_name(f.kind), f.chip, f.eth, dropped, resent, seed_));
    }
    return out;
}

// One phase of a flapping link; each schedules the next, until the run (the device) ends.
void FaultInjector::schedule_flap(const FaultSpec& f, uint64_t at, bool down) {
    device_.at_cycle(at, [this, &f, at, down] {
        device_.cluster().link(*device_.model_chip_index(f.chip), f.eth).set_up(!down);
        record(f, down ? "down" : "up");
        schedule_flap(f, at + f.amount, !down);
    });
}

}  // namespace fabric
