// The remote-access service of the base firmware (remote_access.h, README.md "Remote access").
//
// Two roles on every core, each one step per call:
//   gateway  the host's request queue: a command for this chip is done here; one for the chip at
//            the other end of the link is carried there (its message, a write's data, then a
//            doorbell) and completed when the peer's answer rings this core's reply box, or
//            failed after kPeerAnswerTimeoutCycles; anything else is kFlagDestUnreachable.
//            One command at a time, in queue order; its slot is freed when it completes.
//   peer     the inbox: a command the peer carried here is done on this chip and answered.
// NoC accesses use NOC1 (applications drive NOC0) and are re-seeded before each command.
#include "remote_access.h"

#include <stddef.h>
#include <stdint.h>

#include "fabric/l1_words.h"
#include "hal/arch.h"
#include "hal/clock.h"
#include "hal/eth.h"
#include "hal/noc.h"
#include "protocol/erisc_base_fw.h"
#include "protocol/erisc_remote_access.h"

namespace ra = protocol::remote_access;
namespace bfw = protocol::base_fw;

namespace {

using Noc = hal::Noc<hal::kArch>;
using Eth = hal::Eth<hal::kArch>;
using hal::Status;

constexpr uint32_t kNocTimeoutCycles = 20000;
constexpr uint32_t kTxqTimeoutCycles = 20000;
// A command that failed in the NoC or on the link (ours).
constexpr uint32_t kFlagFailed = ra::kFlagBlockUnavailable;

constinit Noc g_noc{hal::NocId::Noc1};
constinit hal::NocXY g_mirror{};   // NOC0 x + NOC1 x (and y) of this core: converts coordinates
constinit uint32_t g_seq = 0;      // last sequence number sent to the peer
constinit uint32_t g_pending = 0;  // the sequence number awaiting the peer's answer, 0 none
constinit uint64_t g_pending_deadline = 0;
constinit uint32_t g_last_served = 0;  // the last inbox doorbell answered

using fabric::ld;
using fabric::st;
using fabric::store_struct;

template <typename T>
T load(uint32_t addr) {
    T v;
    fabric::load_struct(v, addr);
    return v;
}

void copy_words(uint32_t dst, uint32_t src, uint32_t bytes) {
    for (uint32_t i = 0; i < bytes; i += 4) st(dst + i, ld(src + i));
}

void bump_counter(uint32_t index) {
    const uint32_t a = ra::counter_addr(index);
    st(a, ld(a) + 1);
}

constexpr uint32_t align16(uint32_t v) {
    return (v + 15) & ~15u;
}

// ---- doing a command on this chip --------------------------------------------------------------

// The bytes of a command's data sit at `data_l1 + offset % 32`, so they are congruent with the
// target address as the NoC requires.
uint32_t data_at(uint32_t data_l1, const ra::LinkMsg& m) {
    return data_l1 + static_cast<uint32_t>(m.sys_addr % ra::kBlockAlign);
}

bool well_formed(const ra::LinkMsg& m) {
    const bool block = (m.flags & ra::kFlagDataBlock) != 0;
    if (m.size == 0 || m.size > ra::kMaxBlockBytes || m.size % 4 != 0 || m.sys_addr % 4 != 0)
        return false;
    return block || m.size == 4;
}

hal::NocAddr noc1_target(const ra::LinkMsg& m) {
    const ra::SysAddr a = ra::decode_sys_addr(m.sys_addr);
    if ((m.flags & ra::kFlagNoc1) != 0) return {a.noc_x, a.noc_y, a.offset};
    return {g_mirror.x - a.noc_x, g_mirror.y - a.noc_y, a.offset};
}

// A write from, or a read into, `data_l1` (data_at). A word read comes back in m.data too.
// Returns 0 or the error flags.
uint32_t execute(ra::LinkMsg& m, uint32_t data_l1) {
    if (!well_formed(m)) return ra::kFlagBlockUnavailable;
    if (g_noc.init() != Status::Ok) return kFlagFailed;
    const uint32_t local = data_at(data_l1, m);
    const hal::NocAddr target = noc1_target(m);
    const auto deadline = hal::Deadline::after_cycles(kNocTimeoutCycles);
    if ((m.flags & ra::kFlagWrReq) != 0) {
        if ((m.flags & ra::kFlagDataBlock) == 0) st(local, m.data);
        if (g_noc.write(local, target, m.size) != Status::Ok) return kFlagFailed;
        return g_noc.write_barrier(deadline) == Status::Ok ? 0 : kFlagFailed;
    }
    if (g_noc.read(target, local, m.size) != Status::Ok) return kFlagFailed;
    if (g_noc.read_barrier(deadline) != Status::Ok) return kFlagFailed;
    if ((m.flags & ra::kFlagDataBlock) == 0) m.data = ld(local);
    return 0;
}

// ---- the link ----------------------------------------------------------------------------------

Status send(uint32_t src, uint32_t dst, uint32_t bytes) {
    return Eth::send(hal::EthTxq::Q0, src, dst, align16(bytes),
                     hal::Deadline::after_cycles(kTxqTimeoutCycles));
}

// Carry `m` (and `data_bytes` of data from `data_src`, congruent as data_at) into the peer's box
// `box` and ring its doorbell with `seq`, from this core's staging box `staging`.
Status post(uint32_t staging, uint32_t box, const ra::LinkMsg& m, uint32_t data_src,
            uint32_t data_bytes, uint32_t seq) {
    if (data_bytes != 0) {
        const uint32_t lead = static_cast<uint32_t>(m.sys_addr % ra::kBlockAlign);
        if (send(data_src, box + ra::kBoxData, lead + data_bytes) != Status::Ok)
            return Status::Timeout;
    }
    store_struct(staging + ra::kBoxMsg, m);
    if (send(staging + ra::kBoxMsg, box + ra::kBoxMsg, sizeof(m)) != Status::Ok)
        return Status::Timeout;
    store_struct(staging + ra::kBoxDoorbell, ra::Doorbell{seq, {}});
    return send(staging + ra::kBoxDoorbell, box + ra::kBoxDoorbell, sizeof(ra::Doorbell));
}

bool is_read(const ra::LinkMsg& m) {
    return (m.flags & ra::kFlagRdReq) != 0;
}
bool is_block(const ra::LinkMsg& m) {
    return (m.flags & ra::kFlagDataBlock) != 0;
}

// ---- peer role ---------------------------------------------------------------------------------

void serve_inbox() {
    const uint32_t seq = ld(ra::kInbox + ra::kBoxDoorbell);
    if (seq == 0 || seq == g_last_served) return;
    ra::LinkMsg m = load<ra::LinkMsg>(ra::kInbox + ra::kBoxMsg);
    const uint32_t data = ra::kInbox + ra::kBoxData;
    m.status = execute(m, data);
    const uint32_t back = is_read(m) && is_block(m) && m.status == 0 ? m.size : 0;
    if (post(ra::kReplyStaging, ra::kReplyBox, m, data, back, seq) == Status::Ok)
        g_last_served = seq;  // else answered again on the next call (the link was busy)
}

// ---- gateway role ------------------------------------------------------------------------------

ra::LinkMsg message_of(const ra::RoutingCmd& c) {
    ra::LinkMsg m{};
    m.sys_addr = c.sys_addr;
    m.flags = c.flags & (ra::kFlagWrReq | ra::kFlagRdReq | ra::kFlagDataBlock | ra::kFlagNoc1);
    m.size = (c.flags & ra::kFlagDataBlock) != 0 ? c.data : 4;
    m.data = c.data;
    return m;
}

// Finish the command at the queue's read pointer with the answer `m` (its data, for a read, at
// data_at(data_l1)). False while the response queue is full (try again later).
bool complete(const ra::LinkMsg& m, uint32_t data_l1) {
    const uint32_t req_rptr = ld(ra::rptr_addr(ra::kRequestQueue));
    ra::RoutingCmd c = load<ra::RoutingCmd>(ra::cmd_addr(ra::kRequestQueue, req_rptr));
    if (is_read(m)) {
        const uint32_t wptr = ld(ra::wptr_addr(ra::kResponseQueue));
        if (ra::queue_full(wptr, ld(ra::rptr_addr(ra::kResponseQueue)))) return false;
        const uint32_t slot = wptr % ra::kQueueSlots;
        if (is_block(m) && m.status == 0)
            copy_words(ra::response_block(slot), data_at(data_l1, m), m.size);
        c.flags = ra::kFlagRdData | (c.flags & ra::kFlagDataBlock) | m.status;
        c.data = is_block(m) ? m.size : m.data;
        store_struct(ra::cmd_addr(ra::kResponseQueue, wptr), c);
        st(ra::wptr_addr(ra::kResponseQueue), ra::next_ptr(wptr));
        bump_counter(ra::kReadsDone);
    } else {
        bump_counter(ra::kWritesDone);
    }
    if (m.status != 0) {
        bump_counter(ra::kErrors);
        st(ra::counter_addr(ra::kLastErrorFlags), m.status);
        st(ra::counter_addr(ra::kLastErrorAddrLo), static_cast<uint32_t>(m.sys_addr));
        st(ra::counter_addr(ra::kLastErrorAddrHi), static_cast<uint32_t>(m.sys_addr >> 32));
    }
    st(ra::rptr_addr(ra::kRequestQueue), ra::next_ptr(req_rptr));
    return true;
}

void await_peer() {
    const bool answered = ld(ra::kReplyBox + ra::kBoxDoorbell) == g_pending;
    if (answered) {
        const ra::LinkMsg m = load<ra::LinkMsg>(ra::kReplyBox + ra::kBoxMsg);
        if (complete(m, ra::kReplyBox + ra::kBoxData)) g_pending = 0;
        return;
    }
    if (hal::wall_clock() < g_pending_deadline) return;
    const uint32_t rptr = ld(ra::rptr_addr(ra::kRequestQueue));
    ra::LinkMsg m = message_of(load<ra::RoutingCmd>(ra::cmd_addr(ra::kRequestQueue, rptr)));
    m.status = ra::kFlagDestUnreachable;
    if (complete(m, ra::kOutStaging + ra::kBoxData)) g_pending = 0;
}

bool link_up() {
    return ld(bfw::kTrainStatus) == bfw::kTrainStatusOk;
}

void take_command() {
    const uint32_t rptr = ld(ra::rptr_addr(ra::kRequestQueue));
    ra::LinkMsg m = message_of(load<ra::RoutingCmd>(ra::cmd_addr(ra::kRequestQueue, rptr)));
    const ra::SysAddr a = ra::decode_sys_addr(m.sys_addr);
    const uint32_t target = ra::pack_coord(a.chip_x, a.chip_y);
    const uint32_t block = ra::request_block(rptr % ra::kQueueSlots);
    if (target == ld(bfw::results_word(ra::kResultsLocalCoordWord))) {
        const uint32_t data = is_read(m) ? ra::kOutStaging + ra::kBoxData : block;
        m.status = execute(m, data);
        (void)complete(m, data);  // a full response queue: done again on the next call
        return;
    }
    if (target != ld(bfw::results_word(ra::kResultsRemoteCoordWord)) || !link_up()) {
        m.status = ra::kFlagDestUnreachable;
        (void)complete(m, block);
        return;
    }
    g_seq = g_seq + 1 == 0 ? 1 : g_seq + 1;
    const uint32_t data_bytes = !is_read(m) && is_block(m) ? m.size : 0;
    if (post(ra::kOutStaging, ra::kInbox, m, block, data_bytes, g_seq) != Status::Ok) {
        m.status = kFlagFailed;
        (void)complete(m, block);
        return;
    }
    g_pending = g_seq;
    g_pending_deadline = hal::wall_clock() + ra::kPeerAnswerTimeoutCycles;
}

void serve_host_queue() {
    if (g_pending != 0) {
        await_peer();
        return;
    }
    const uint32_t wptr = ld(ra::wptr_addr(ra::kRequestQueue));
    if (!ra::queue_empty(wptr, ld(ra::rptr_addr(ra::kRequestQueue)))) take_command();
}

}  // namespace

void remote_access_init() {
    for (uint32_t a = ra::kRequestQueue; a < ra::kResponseQueue + sizeof(ra::CmdQueue); a += 4)
        st(a, 0);
    st(ra::kInbox + ra::kBoxDoorbell, 0);
    st(ra::kReplyBox + ra::kBoxDoorbell, 0);
    const uint32_t node0 =
        hal::mmio::read32(hal::noc::cmd_buf_base(hal::kArch, 0, 0) + hal::kArch.noc.node_id);
    const hal::NocXY self0 = hal::noc::decode_unicast_coord(node0);
    if (g_noc.init() == Status::Ok) g_mirror = {self0.x + g_noc.self().x, self0.y + g_noc.self().y};
}

bool remote_access_has_work() {
    if (g_pending != 0) return ld(ra::kReplyBox + ra::kBoxDoorbell) == g_pending;
    const uint32_t seq = ld(ra::kInbox + ra::kBoxDoorbell);
    return (seq != 0 && seq != g_last_served) ||
           !ra::queue_empty(ld(ra::wptr_addr(ra::kRequestQueue)),
                            ld(ra::rptr_addr(ra::kRequestQueue)));
}

void remote_access_service() {
    serve_inbox();
    serve_host_queue();
}

void remote_access_finish() {
    const uint64_t give_up = hal::wall_clock() + 4 * uint64_t{ra::kPeerAnswerTimeoutCycles};
    uint64_t quiet_until = hal::wall_clock() + ra::kQuietBeforeAppCycles;
    while (hal::wall_clock() < give_up) {
        const bool work = remote_access_has_work() || g_pending != 0;
        remote_access_service();
        const uint64_t now = hal::wall_clock();
        if (work) {
            quiet_until = now + ra::kQuietBeforeAppCycles;
        } else if (now >= quiet_until) {
            return;
        }
    }
}
