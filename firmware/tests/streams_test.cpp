// Stream registers from firmware: local read/add/reset/scratch and the argument checks; a remote
// increment over the NOC (inline write to a same-chip neighbour's update register, read back over
// the NOC, plus a loopback increment of this core's own stream through its NIU); a remote increment
// over Ethernet (remote register write to the link peer), answered by the peer with an increment of
// its own (role Subordinate), so both directions are checked by the firmware that owns the counter.
#include <stdint.h>

#include "common/eth_link.h"
#include "common/kernel.h"
#include "hal/noc.h"
#include "hal/timeouts.h"

namespace {

using fwtest::Eth;
using fwtest::Streams;
using protocol::StreamsArgs;
using protocol::StreamsResults;
using protocol::StreamsStep;
using protocol::TestFail;

constexpr const hal::ArchMap& A = hal::kArch;

StreamsResults r{};

int subordinate(fwtest::Kernel& k, const StreamsArgs& a) {
    const auto own = Streams::make_id(a.peer_stream);
    const auto answer = Streams::make_id(a.answer_stream);
    const auto delta = Streams::encode_delta(protocol::kStreamsAnswerDelta);
    FW_EXPECT(k, r, own.ok() && answer.ok() && delta.ok(), TestFail::BadArgs, StreamsStep::WaitEth,
              0);
    const hal::Status s = hal::wait_until(
        [&] {
            return Streams::read(own.value) == static_cast<uint32_t>(protocol::kStreamsEthDelta);
        },
        fwtest::deadline_us(a.timeout_us), k.term());
    r.observed = Streams::read(own.value);
    if (s != hal::Status::Ok) {
        return k.stuck(r, protocol::kStreamsStuckWaitEthIncrement, StreamsStep::WaitEth, s,
                       r.observed);
    }
    FW_EXPECT_STATUS(
        k, r,
        Eth::write_remote_reg(hal::EthTxq::Q0, Streams::update_reg_addr(answer.value), delta.value,
                              fwtest::deadline_us(a.timeout_us), k.term()),
        hal::Status::Ok, StreamsStep::Answer, 0);
    FW_EXPECT_STATUS(k, r,
                     Eth::wait_idle(hal::EthTxq::Q0, fwtest::deadline_us(a.timeout_us), k.term()),
                     hal::Status::Ok, StreamsStep::Answer, 1);
    return k.pass(r);
}

int master(fwtest::Kernel& k, const StreamsArgs& a) {
    const auto sid = Streams::make_id(a.local_stream);
    const auto nid = Streams::make_id(a.neighbor_stream);
    const auto pid = Streams::make_id(a.peer_stream);
    const auto aid = Streams::make_id(a.answer_stream);
    FW_EXPECT(k, r,
              sid.ok() && nid.ok() && pid.ok() && aid.ok() && a.local_stream != a.answer_stream,
              TestFail::BadArgs, StreamsStep::Local, 0);
    const hal::StreamId s = sid.value;

    // ---- local ----
    FW_EXPECT_STATUS(k, r, Streams::reset(s, 0), hal::Status::Ok, StreamsStep::Local, 1);
    FW_EXPECT(k, r, Streams::read(s) == 0, TestFail::CounterMismatch, StreamsStep::Local,
              Streams::read(s));
    FW_EXPECT_STATUS(k, r, Streams::add(s, 5), hal::Status::Ok, StreamsStep::Local, 2);
    FW_EXPECT(k, r, Streams::read(s) == 5, TestFail::CounterMismatch, StreamsStep::Local,
              Streams::read(s));
    FW_EXPECT_STATUS(k, r, Streams::add(s, -2), hal::Status::Ok, StreamsStep::Local, 3);
    r.local_after_add = Streams::read(s);
    FW_EXPECT(k, r, r.local_after_add == 3, TestFail::CounterMismatch, StreamsStep::Local,
              r.local_after_add);
    FW_EXPECT_STATUS(k, r, Streams::reset(s, hal::stream::kWordsFreeMask), hal::Status::Ok,
                     StreamsStep::Local, 4);
    FW_EXPECT(k, r, Streams::read(s) == hal::stream::kWordsFreeMask, TestFail::CounterMismatch,
              StreamsStep::Local, Streams::read(s));
    FW_EXPECT_STATUS(k, r, Streams::add(s, 1), hal::Status::Ok, StreamsStep::Local, 5);
    r.local_after_wrap = Streams::read(s);
    FW_EXPECT(k, r, r.local_after_wrap == 0, TestFail::CounterMismatch, StreamsStep::Local,
              r.local_after_wrap);
    Streams::write_scratch(s, protocol::kStreamsScratchValue);
    r.local_scratch = Streams::read_scratch(s);
    FW_EXPECT(k, r, r.local_scratch == protocol::kStreamsScratchValue, TestFail::CounterMismatch,
              StreamsStep::Local, r.local_scratch);

    // ---- argument checks ----
    FW_EXPECT_STATUS(k, r, Streams::add(s, 70000), hal::Status::BadArg, StreamsStep::LocalErrors,
                     0);
    FW_EXPECT_STATUS(k, r, Streams::add(s, -65537), hal::Status::BadArg, StreamsStep::LocalErrors,
                     1);
    FW_EXPECT_STATUS(k, r, Streams::reset(s, hal::stream::kWordsFreeMask + 1), hal::Status::BadArg,
                     StreamsStep::LocalErrors, 2);
    FW_EXPECT_STATUS(k, r, Streams::make_id(Streams::kCount).status, hal::Status::OutOfRange,
                     StreamsStep::LocalErrors, 3);
    FW_EXPECT_STATUS(k, r, Streams::encode_delta(65536).status, hal::Status::BadArg,
                     StreamsStep::LocalErrors, 4);
    FW_EXPECT(k, r, Streams::read(s) == 0, TestFail::CounterMismatch, StreamsStep::LocalErrors,
              Streams::read(s));

    // ---- over the NOC: the neighbour's counter, then our own through the NIU ----
    hal::Noc<hal::kArch> noc{hal::NocId::Noc0};
    FW_EXPECT_STATUS(k, r, noc.init(), hal::Status::Ok, StreamsStep::NocRemote, 0);
    const auto dn = Streams::encode_delta(protocol::kStreamsNocDelta);
    FW_EXPECT_STATUS(
        k, r,
        noc.write_inline({a.neighbor_x, a.neighbor_y, Streams::update_reg_addr(nid.value)},
                         dn.value),
        hal::Status::Ok, StreamsStep::NocRemote, 1);
    FW_EXPECT_STATUS(
        k, r, noc.write_barrier(hal::Deadline::after_us(A, hal::timeouts::kNocBarrierUs), k.term()),
        hal::Status::Ok, StreamsStep::NocRemote, 2);
    const uint32_t counter_reg =
        Streams::reg_addr(nid.value, A.stream.remote_dest_buf_space_available);
    const uint32_t readback = a.local_readback + (counter_reg % 16);  // congruent mod 16
    fwtest::store32(readback, 0xFFFFFFFF);
    FW_EXPECT_STATUS(k, r, noc.read({a.neighbor_x, a.neighbor_y, counter_reg}, readback, 4),
                     hal::Status::Ok, StreamsStep::NocRemote, 3);
    FW_EXPECT_STATUS(
        k, r, noc.read_barrier(hal::Deadline::after_us(A, hal::timeouts::kNocBarrierUs), k.term()),
        hal::Status::Ok, StreamsStep::NocRemote, 4);
    r.neighbor_readback = fwtest::load32(readback) & hal::stream::kWordsFreeMask;
    FW_EXPECT(k, r, r.neighbor_readback == static_cast<uint32_t>(protocol::kStreamsNocDelta),
              TestFail::CounterMismatch, StreamsStep::NocRemote, r.neighbor_readback);
    const auto d2 = Streams::encode_delta(2);
    FW_EXPECT_STATUS(
        k, r, noc.write_inline({noc.self().x, noc.self().y, Streams::update_reg_addr(s)}, d2.value),
        hal::Status::Ok, StreamsStep::NocRemote, 5);
    FW_EXPECT_STATUS(
        k, r, noc.write_barrier(hal::Deadline::after_us(A, hal::timeouts::kNocBarrierUs), k.term()),
        hal::Status::Ok, StreamsStep::NocRemote, 6);
    FW_EXPECT(k, r, Streams::read(s) == 2, TestFail::CounterMismatch, StreamsStep::NocRemote,
              Streams::read(s));

    // ---- over Ethernet: increment the peer's stream, wait for its answer ----
    const auto de = Streams::encode_delta(protocol::kStreamsEthDelta);
    FW_EXPECT_STATUS(k, r,
                     Eth::write_remote_reg(hal::EthTxq::Q0, Streams::update_reg_addr(pid.value),
                                           de.value, fwtest::deadline_us(a.timeout_us), k.term()),
                     hal::Status::Ok, StreamsStep::EthRemote, 0);
    const hal::Status st = hal::wait_until(
        [&] {
            return Streams::read(aid.value) == static_cast<uint32_t>(protocol::kStreamsAnswerDelta);
        },
        fwtest::deadline_us(a.timeout_us), k.term());
    r.observed = Streams::read(aid.value);
    if (st != hal::Status::Ok) {
        return k.stuck(r, protocol::kStreamsStuckWaitAnswer, StreamsStep::WaitAnswer, st,
                       r.observed);
    }
    return k.pass(r);
}

}  // namespace

int main() {
    fwtest::Kernel k;
    if (!k.begin()) {
        return k.exit_code();
    }
    const StreamsArgs a = k.args<StreamsArgs>();
    switch (k.role()) {
        case protocol::KernelRole::Master:
            return master(k, a);
        case protocol::KernelRole::Subordinate:
            return subordinate(k, a);
        default:
            return k.fail(r, TestFail::BadArgs, StreamsStep::Local, hal::Status::Ok,
                          static_cast<uint32_t>(k.role()));
    }
}
