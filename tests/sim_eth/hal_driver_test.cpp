// The real firmware-side driver (hal/eth.h, built with FABRIC_HAL_FAKE_MMIO) programming the model:
// a hal::mmio::Backend that forwards TXQ register accesses to TxQueues, serves the wall clock from
// the link's cycle count and uses the model core's memory as L1. Every register access costs the
// core one cycle (the link steps once), so the driver's bounded waits make progress in model time.
#include <catch2/catch.hpp>

#include "eth_test_util.h"
#include "hal/eth.h"
#include "hal/mmio.h"

using namespace eth_test;
namespace he = hal::eth;
using hal::Deadline;
using hal::EthTxq;
using hal::Status;
using sim::eth::ErrorKind;

namespace {

class ModelMmio final : public hal::mmio::Backend {
  public:
    ModelMmio(TxQueues& txq, Link& link, CoreMemory& l1) : txq_(txq), link_(link), l1_(l1) {
        prev_ = hal::mmio::g_backend;
        hal::mmio::g_backend = this;
    }
    ~ModelMmio() { hal::mmio::g_backend = prev_; }
    ModelMmio(const ModelMmio&) = delete;
    ModelMmio& operator=(const ModelMmio&) = delete;

    uint32_t read32(uint32_t addr) override {
        uint32_t v;
        if (addr == hal::common::kWallClockLo) {
            const uint64_t now = link_.cycle();
            hi_at_ = static_cast<uint32_t>(now >> 32);
            v = static_cast<uint32_t>(now);
        } else if (addr == hal::common::kWallClockHiAt) {
            v = hi_at_;
        } else if (auto r = txq_.mmio_read(addr)) {
            v = *r;
            ++reg_reads_;
        } else {
            unanswered_.push_back(addr);
            v = 0xDEADBEEF;
        }
        link_.step();
        return v;
    }
    void write32(uint32_t addr, uint32_t value) override {
        if (txq_.mmio_write(addr, value)) {
            writes_.push_back({addr, value});
        } else {
            unanswered_.push_back(addr);
        }
        link_.step();
    }
    uint8_t* l1_base() override { return l1_.data(); }
    uint32_t l1_size() const override { return l1_.size(); }

    const std::vector<CoreMemory::RegWrite>& writes() const { return writes_; }
    const std::vector<uint32_t>& unanswered() const { return unanswered_; }
    uint64_t reg_reads() const { return reg_reads_; }

  private:
    TxQueues& txq_;
    Link& link_;
    CoreMemory& l1_;
    hal::mmio::Backend* prev_ = nullptr;
    uint32_t hi_at_ = 0;
    uint64_t reg_reads_ = 0;
    std::vector<CoreMemory::RegWrite> writes_;
    std::vector<uint32_t> unanswered_;
};

template <const hal::ArchMap& A>
void hal_sends_and_model_delivers() {
    using Eth = hal::Eth<A>;
    Pair p(A, LinkConfig::for_arch(A));
    ModelMmio mmio(p.txq_a, p.link, p.mem_a);
    const uint32_t size = 16384;
    const auto data = pattern(size, 60);
    p.mem_a.fill(0x10000, data);

    CHECK(Eth::set_accept_ahead(EthTxq::Q0) == Status::Ok);
    CHECK(rd(p.txq_a, 0, he::kTxqDataPacketAcceptAhead) == he::kDefaultAcceptAhead);

    const uint64_t before = p.link.cycle();
    REQUIRE(Eth::send(EthTxq::Q0, 0x10000, 0x20000, size, Deadline::after_cycles(1000)) ==
            Status::Ok);
    // The driver programmed exactly the registers the model decodes, in the documented order.
    const std::vector<CoreMemory::RegWrite> program{
        {he::txq_reg(0, he::kTxqTransferStartAddr), 0x10000},
        {he::txq_reg(0, he::kTxqTransferSizeBytes), size},
        {he::txq_reg(0, he::kTxqDestAddr), 0x20000},
        {he::txq_reg(0, he::kTxqCmd), he::kCmdDataPacket},
    };
    REQUIRE(mmio.writes().size() == 5);
    CHECK(std::vector<CoreMemory::RegWrite>(mmio.writes().begin() + 1, mmio.writes().end()) ==
          program);
    // the last of 12 frames is taken after ~1350 cycles (WH): the queue is still busy, try_send
    // says so.
    CHECK(Eth::is_busy(EthTxq::Q0));
    CHECK(Eth::try_send(EthTxq::Q0, 0x10000, 0x30000, 64) == Status::Busy);
    // send() waits (bounded) until the model clears busy, then programs the next command.
    REQUIRE(Eth::send(EthTxq::Q0, 0x10000, 0x30000, 64, Deadline::after_cycles(5000)) ==
            Status::Ok);
    const uint64_t accepted = p.link.cycle();
    CHECK(accepted - before > 1200);
    // The other queue was free all along.
    CHECK_FALSE(Eth::is_busy(EthTxq::Q1));

    run_until_idle(p.link);
    CHECK(p.mem_b.bytes(0x20000, size) == data);
    CHECK(p.mem_b.bytes(0x30000, 64) == std::vector<uint8_t>(data.begin(), data.begin() + 64));
    CHECK(p.link.stats(Dir::AtoB).commands_completed == 2);
    // The driver never wrote CMD into a busy queue and every access hit a model register.
    CHECK(p.txq_a.errors().empty());
    CHECK(mmio.unanswered().empty());

    // Remote register write on TXQ0 lands in the peer's register.
    const uint32_t reg =
        hal::common::kStreamRegsBase + A.stream.remote_dest_buf_space_available_update * 4;
    REQUIRE(Eth::write_remote_reg(EthTxq::Q0, reg, 0x40, Deadline::after_cycles(1000)) ==
            Status::Ok);
    run_until_idle(p.link);
    CHECK(p.mem_b.reg_log() == std::vector<CoreMemory::RegWrite>{{reg, 0x40}});
    CHECK(p.txq_a.errors().empty());
}

}  // namespace

TEST_CASE("hal::Eth<WH> drives the model", "[hal][eth]") {
    hal_sends_and_model_delivers<hal::kWormholeB0>();
}

TEST_CASE("hal::Eth<BH> drives the model", "[hal][eth]") {
    hal_sends_and_model_delivers<hal::kBlackhole>();

    // The third queue exists on BH and sends; its busy bit is STATUS bit 16, polled after a CMD
    // read-back (BH-55).
    using Eth = hal::Eth<hal::kBlackhole>;
    Pair p(hal::kBlackhole, LinkConfig::for_arch(hal::kBlackhole));
    ModelMmio mmio(p.txq_a, p.link, p.mem_a);
    p.mem_a.fill(0x1000, pattern(4096, 61));
    REQUIRE(Eth::send(EthTxq::Q2, 0x1000, 0x9000, 4096, Deadline::after_cycles(100)) == Status::Ok);
    CHECK(Eth::is_busy(EthTxq::Q2));
    REQUIRE(Eth::wait_idle(EthTxq::Q2, Deadline::after_cycles(1000)) == Status::Ok);
    run_until_idle(p.link);
    CHECK(p.mem_b.bytes(0x9000, 4096) == pattern(4096, 61));
    CHECK(p.link.completions(Dir::AtoB).at(0).queue == 2);
    CHECK(mmio.unanswered().empty());
}

TEST_CASE("the HAL and the model agree on which commands are valid", "[hal][eth]") {
    using Eth = hal::Eth<hal::kWormholeB0>;
    const uint32_t l1 = hal::kWormholeB0.eth_l1_size;
    struct Case {
        uint32_t src, dst, size;
    };
    const Case cases[] = {
        {0x1000, 0x2000, 64},  {0x1008, 0x2000, 64},
        {0x1000, 0x2004, 64},  {0x1000, 0x2000, 40},
        {0x1000, 0x2000, 0},   {l1 - 16, 0x2000, 32},
        {0x1000, l1 - 16, 32}, {0x1000, l1 - 32, 32},
        {l1 - 16, 0x2000, 16}, {0, 0, 16},
        {0x1001, 0x2003, 3},
    };
    for (const Case& c : cases) {
        CAPTURE(c.src, c.dst, c.size);
        const Status hal_says = Eth::check_send(EthTxq::Q0, c.src, c.dst, c.size);
        // Program the model directly (bypassing the HAL's own checks) and see whether it objects,
        // at the CMD write or when the frames land in the peer.
        Pair p;
        program_send(p.txq_a, 0, c.src, c.dst, c.size);
        run_until_idle(p.link);
        CHECK((hal_says == Status::Ok) == p.txq_a.errors().empty());
        if (hal_says == Status::Misaligned) {
            for (const auto& e : p.txq_a.errors()) {
                CHECK((e.kind == ErrorKind::MisalignedStart ||
                       e.kind == ErrorKind::MisalignedDest || e.kind == ErrorKind::MisalignedSize));
            }
        }
    }
    // Remote register writes: the same queue rule from arch_map.h on both sides.
    for (uint32_t q = 0; q < hal::kWormholeB0.eth_tx_queues; ++q) {
        const Status hal_says = Eth::check_remote_reg(static_cast<EthTxq>(q), 0xFFB40000);
        Pair p;
        program_reg_write(p.txq_a, q, 0xFFB40000, 1);
        CHECK((hal_says == Status::Ok) == p.txq_a.errors().empty());
        if (hal_says == Status::Unsupported) {
            CHECK(p.txq_a.errors().at(0).kind == ErrorKind::RemoteRegWriteNotSupported);
        }
    }
}

TEST_CASE("the HAL refuses bad arguments before touching a model register", "[hal][eth]") {
    using Eth = hal::Eth<hal::kWormholeB0>;
    Pair p;
    ModelMmio mmio(p.txq_a, p.link, p.mem_a);
    CHECK(Eth::try_send(EthTxq::Q0, 0x1008, 0x2000, 64) == Status::Misaligned);
    CHECK(Eth::try_send(EthTxq::Q0, 0x1000, 0x2000, 0) == Status::BadArg);
    CHECK(Eth::try_write_remote_reg(EthTxq::Q1, 0xFFB40000, 1) == Status::Unsupported);
    CHECK(mmio.writes().empty());
    CHECK(mmio.reg_reads() == 0);
    CHECK(p.txq_a.errors().empty());
}

TEST_CASE("a link that stays down makes the driver's bounded wait time out", "[hal][eth][fault]") {
    using Eth = hal::Eth<hal::kWormholeB0>;
    Pair p;
    ModelMmio mmio(p.txq_a, p.link, p.mem_a);
    p.mem_a.fill(0, pattern(4096, 62));
    p.link.set_up(false);
    REQUIRE(Eth::send(EthTxq::Q0, 0, 0x8000, 4096, Deadline::after_cycles(100)) == Status::Ok);
    const uint64_t t0 = p.link.cycle();
    CHECK(Eth::send(EthTxq::Q0, 0, 0x9000, 4096, Deadline::after_cycles(2000)) == Status::Timeout);
    CHECK(p.link.cycle() - t0 >= 2000);
    CHECK(p.txq_a.errors().empty());
    p.link.set_up(true);
    REQUIRE(Eth::send(EthTxq::Q0, 0, 0x9000, 4096, Deadline::after_cycles(2000)) == Status::Ok);
    run_until_idle(p.link);
    CHECK(p.mem_b.bytes(0x8000, 4096) == pattern(4096, 62));
    CHECK(p.mem_b.bytes(0x9000, 4096) == pattern(4096, 62));
    CHECK(p.link.stats(Dir::AtoB).frames_retransmitted == 0);
}
