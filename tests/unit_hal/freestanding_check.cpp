// Compiled for the ERISC target only (rv32im, ilp32, freestanding, no exceptions/RTTI), once per
// arch, by the hal_freestanding_* ctests. It includes every HAL header and instantiates every
// driver entry point in functions with external linkage, so the object file shows what the
// firmware gets: no static constructors, no library calls, and plain loads and stores for MMIO.
#include "hal/arch.h"
#include "hal/arch_map.h"
#include "hal/clock.h"
#include "hal/csr.h"
#include "hal/encoding.h"
#include "hal/eth.h"
#include "hal/mmio.h"
#include "hal/noc.h"
#include "hal/status.h"
#include "hal/stream.h"
#include "hal/timeouts.h"
#include "hal/wait.h"

namespace {
constexpr uint32_t kScratch = 0x20000;
using Noc = hal::Noc<hal::kArch>;
using Eth = hal::Eth<hal::kArch>;
using Streams = hal::Streams<hal::kArch>;
}  // namespace

// A driver object in .bss/.data with no constructor call.
constinit Noc g_noc1{hal::NocId::Noc1, {.atomic_return_l1_addr = kScratch}};

extern "C" {

// The seam: these must compile to one store / one load each.
void check_mmio_write(uint32_t v) {
    hal::mmio::write32(0xFFB20000, v);
}
uint32_t check_mmio_read() {
    return hal::mmio::read32(0xFFB20200);
}
uint64_t check_clock() {
    return hal::wall_clock();
}
uint32_t check_csr() {
    return hal::csr::mcycle();
}

int check_noc(uint32_t src, uint32_t dst, uint32_t size) {
    int bad = 0;
    bad += g_noc1.init() != hal::Status::Ok;
    bad += g_noc1.write(src, {.x = 1, .y = 2, .addr = dst}, size, {.trid = 3}) != hal::Status::Ok;
    bad += g_noc1.read({.x = 1, .y = 2, .addr = dst}, src, size) != hal::Status::Ok;
    bad += g_noc1.write_inline({.x = 1, .y = 2, .addr = 0xFFB40000}, 5, {.posted = true}) !=
           hal::Status::Ok;
    bad += g_noc1.atomic_inc({.x = 1, .y = 2, .addr = dst}, 1) != hal::Status::Ok;
    bad += g_noc1.multicast_write(src, {1, 1, 4, 4}, dst, size, 16) != hal::Status::Ok;
    const auto d = hal::Deadline::after_us(hal::kArch, hal::timeouts::kNocBarrierUs);
    bad += g_noc1.write_barrier(d) != hal::Status::Ok;
    bad += g_noc1.read_barrier(d) != hal::Status::Ok;
    bad += g_noc1.atomic_barrier(d) != hal::Status::Ok;
    bad += g_noc1.trid_barrier(3, d) != hal::Status::Ok;
    bad += g_noc1.full_barrier(d) != hal::Status::Ok;
    bad += g_noc1.clear_trid_counters(0x8) != hal::Status::Ok;
    bad += g_noc1.trid_writes_sent(3) ? 0 : 1;
    return bad;
}

int check_eth(const uint32_t* term) {
    int bad = 0;
    const auto d = hal::Deadline::after_us(hal::kArch, hal::timeouts::kEthTxqReadyUs);
    bad += Eth::set_accept_ahead(hal::EthTxq::Q0) != hal::Status::Ok;
    bad += Eth::try_send(hal::EthTxq::Q0, 0x20000, 0x20000, 4096) != hal::Status::Ok;
    bad += Eth::send(hal::EthTxq::Q1, 0x20000, 0x20000, 4096, d, term) != hal::Status::Ok;
    bad += Eth::write_remote_reg(hal::EthTxq::Q0, Streams::update_reg_addr(Streams::id<3>()), 64, d,
                                 term) != hal::Status::Ok;
    bad += Eth::try_write_remote_reg(hal::EthTxq::Q0, 0xFFB40000, 1) != hal::Status::Ok;
    return bad + (Eth::is_busy(hal::EthTxq::Q1) ? 1 : 0);
}

int check_streams(uint32_t n, int32_t delta) {
    const auto id = Streams::make_id(n);
    if (!id.ok()) {
        return -1;
    }
    int bad = Streams::add(id.value, delta) != hal::Status::Ok;
    bad += Streams::reset(id.value, 0) != hal::Status::Ok;
    Streams::write_scratch(id.value, 0x0fed);
    return bad + static_cast<int>(Streams::read(id.value) + Streams::read_scratch(id.value));
}

int check_wait(const uint32_t* flag, const uint32_t* term) {
    const auto d = hal::Deadline::after_cycles(1000);
    return static_cast<int>(
        hal::wait_until([flag] { return hal::mmio::load_shared(flag) != 0; }, d, term));
}

const char* check_to_string(hal::Status s) {
    return hal::to_string(s);
}

}  // extern "C"
