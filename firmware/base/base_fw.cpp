// Base firmware of a Wormhole active Ethernet core, written for this project (README.md).
//
// From reset it publishes its status block, the heartbeat (0x1C, 0xABCD in the upper half), the
// link status (0x1ED4: 6 when link training succeeded) and the context-switch entry in the jump
// table (0x9020), then supervises forever: one bounded wait per heartbeat period for the launch
// flag (0x9004) or remote-access work (remote_access.h); on each pass it beats, republishes the
// link status and serves remote access. When the host sets the
// flag it calls the application at 0x9040. An application that returns (a cooperative kernel)
// comes back here: its result is recorded, the launch flag is cleared (what tt-metal's
// disable_erisc_app does) and supervision resumes. An application built with the project's crt0
// ends with _exit instead, which in the model halts the core (the sim-control exit register).
//
// There is no termination word: the base firmware is the core's supervisor and, as on silicon,
// never exits; the host stops applications, not the base firmware.
#include <stddef.h>
#include <stdint.h>

#include "fabric/l1_words.h"
#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/wait.h"
#include "protocol/erisc_base_fw.h"
#include "remote_access.h"

namespace bfw = protocol::base_fw;

static_assert(&hal::kArch == &hal::kWormholeB0,
              "the base firmware is for Wormhole B0 active eth cores");

namespace {

using AppEntry = uint32_t (*)();

using fabric::ld;
using fabric::st;

uint32_t status_field(uint32_t offset) {
    return ld(bfw::kStatusBlock + offset);
}

void set_status_field(uint32_t offset, uint32_t value) {
    st(bfw::kStatusBlock + offset, value);
}

void bump_status_field(uint32_t offset) {
    set_status_field(offset, status_field(offset) + 1);
}

void set_state(bfw::State s) {
    set_status_field(offsetof(bfw::StatusBlock, state), static_cast<uint32_t>(s));
}

// Link status from the link-training result (written by training; in the model by the Cluster).
uint32_t link_status(uint32_t train_status) {
    switch (train_status) {
        case bfw::kTrainStatusOk:
            return bfw::kLinkStatusUp;
        case bfw::kTrainStatusTraining:
            return bfw::kLinkStatusTraining;
        case bfw::kTrainStatusFail:
            return bfw::kLinkStatusDown;
        default:
            return bfw::kLinkStatusDown;  // an unknown code is not "up"
    }
}

// The periodic work: heartbeat and link status.
void service() {
    const uint32_t count = (ld(bfw::kHeartbeat) + 1) & ~bfw::kHeartbeatSignatureMask;
    st(bfw::kHeartbeat, bfw::kHeartbeatSignature | count);
    st(bfw::kLinkStatus, link_status(ld(bfw::kTrainStatus)));
}

bool launch_requested() {
    return ld(bfw::kLaunchAppFlag) != 0;
}

bool launch_or_remote_work() {
    return launch_requested() || remote_access_has_work();
}

}  // namespace

// __erisc_jump_table[0]: an application yields to the base firmware by calling this; it does the
// periodic work and returns. It runs on the application's stack and must stay small.
extern "C" void base_fw_context_switch() {
    service();
    remote_access_service();
    bump_status_field(offsetof(bfw::StatusBlock, yields));
}

extern "C" [[noreturn]] void base_fw_main() {
    for (uint32_t off = 0; off < sizeof(bfw::StatusBlock); off += 4) set_status_field(off, 0);
    st(bfw::kHeartbeat, bfw::kHeartbeatSignature);
    st(bfw::kContextSwitchPtr,
       static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&base_fw_context_switch)));
    service();
    remote_access_init();
    set_state(bfw::State::Idle);
    set_status_field(offsetof(bfw::StatusBlock, magic), bfw::kStatusMagic);

    while (true) {
        (void)hal::wait_until(launch_or_remote_work,
                              hal::Deadline::after_cycles(bfw::kHeartbeatPeriodCycles));
        service();
        remote_access_service();
        bump_status_field(offsetof(bfw::StatusBlock, idle_slices));
        if (!launch_requested()) continue;  // a heartbeat period passed, or remote work was done

        set_state(bfw::State::AppRunning);
        remote_access_finish();
        bump_status_field(offsetof(bfw::StatusBlock, app_launches));
        const AppEntry app = reinterpret_cast<AppEntry>(static_cast<uintptr_t>(bfw::kAppBase));
        const uint32_t result = app();
        set_status_field(offsetof(bfw::StatusBlock, app_result), result);
        bump_status_field(offsetof(bfw::StatusBlock, app_returns));
        set_state(bfw::State::Idle);
        st(bfw::kLaunchAppFlag, 0);  // last: once the host sees 0, the status block is final
    }
}
