// The one source of truth for Wormhole B0 and Blackhole addresses seen by an Ethernet RISC-V core.
//
// Firmware, the host and the simulator all include this header. Each arch is one constexpr ArchMap
// value of the same type, so arch differences are data, never copied code. Firmware picks its arch
// at compile time (hal::kArch, see hal/arch.h); the host and the model pick one at run time
// (hal::arch_map(Arch)). The RTL gets the addresses it needs through a package generated from this
// header at build time (sim/tools/gen_rtl_map.cpp), never from a second hand-written copy.
//
// Facts: ../shared/reference/fabric-protocol.md §5.1-5.5, host-and-pcie.md §2.3-2.4, and the public
// Tenstorrent ISA documentation (NoC memory map, NIU counters, alignment, Ethernet TX queues).
//
// Layout of this file:
//   common::   core-local addresses identical on both arches
//   simctrl::  the model-only console/exit block
//   noc::      NIU (NoC interface unit) register offsets, NOC_CTRL / PACKET_TAG / atomic
//              encodings and counter indices that are the same on both arches
//   stream::   overlay stream register address rule and the words-free counter field
//   eth::      Ethernet TX/RX queue register offsets, commands and bits
//   ArchMap    everything that differs, with the nested NocLayout, StreamRegIndex, EthLayout
#pragma once

#include <stdint.h>

namespace hal {

enum class Arch : uint8_t { WormholeB0 = 0, Blackhole = 1 };

// Core-local register blocks common to both arches (same addresses on WH B0 and BH).
namespace common {
inline constexpr uint32_t kLocalDataRamBase = 0xFFB00000;   // per-core data RAM (stack)
inline constexpr uint32_t kRiscDebugRegsBase = 0xFFB12000;  // RISCV_DEBUG_REGS_START
inline constexpr uint32_t kSoftResetReg = 0xFFB121B0;       // RISCV_DEBUG_REG_SOFT_RESET_0
inline constexpr uint32_t kWallClockLo = 0xFFB121F0;        // WALL_CLOCK_0 (free-running cycles)
inline constexpr uint32_t kWallClockHi = 0xFFB121F4;        // WALL_CLOCK_1
inline constexpr uint32_t kWallClockHiAt = 0xFFB121F8;      // WALL_CLOCK_1 latched when _0 was read
inline constexpr uint32_t kErisc0ResetPcReg = 0xFFB14000;   // (I/A)ERISC_RESET_PC
inline constexpr uint32_t kErisc1ResetPcReg = 0xFFB14008;   // SUBORDINATE_(I/A)ERISC_RESET_PC
inline constexpr uint32_t kIramBase = 0xFFC00000;           // WH ERISC IRAM (not load/store)

// Soft-reset bits: 1 = held in reset. ERISC0 aliases the BRISC bit, ERISC1 the TRISC0 bit.
inline constexpr uint32_t kSoftResetErisc0 = 1u << 11;
inline constexpr uint32_t kSoftResetErisc1 = 1u << 12;
inline constexpr uint32_t kSoftResetStaggeredStart = 1u << 31;
inline constexpr uint32_t kSoftResetAllRiscs = 0x47800;  // reset value: every RISC held

inline constexpr uint32_t kNocRegsBase = 0xFFB20000;  // NOC0 NIU; NOC1 at +kNocInstanceStride
inline constexpr uint32_t kNocInstanceStride = 0x10000;
inline constexpr uint32_t kStreamRegsBase = 0xFFB40000;  // NOC overlay stream registers
inline constexpr uint32_t kStreamRegSpace = 0x1000;      // per stream
inline constexpr uint32_t kEthTxqBase = 0xFFB90000;      // ETH TX queue q at + q * kEthTxqStride
inline constexpr uint32_t kEthTxqStride = 0x1000;
}  // namespace common

// The simulator-control block: console and exit for firmware running in the model. It is not a
// silicon register. 0xFE000000 lies outside every real RISC window on both arches: L1 is at
// 0x0 (at most 1.5 MiB) and the core-local blocks sit at 0xFFB00000-0xFFEFFFFF.
namespace simctrl {
inline constexpr uint32_t kBase = 0xFE000000;
inline constexpr uint32_t kSize = 0x1000;
inline constexpr uint32_t kConsoleChar = kBase + 0x0;  // write: low byte goes to the console
inline constexpr uint32_t kExit = kBase + 0x4;         // write: end the run with this exit status
}  // namespace simctrl

// Marks a register (offset or index) the arch does not have.
inline constexpr uint32_t kNoRegister = 0xFFFFFFFF;

// NIU register layout (offsets from a command buffer's base, or from the NIU base) and field
// encodings shared by both arches. Where an offset differs it lives in ArchMap::noc instead.
//
// An NIU has kNumCmdBufs request initiators ("command buffers"); buffer b of NoC n starts at
//   common::kNocRegsBase + n * common::kNocInstanceStride + b * ArchMap::noc_cmd_buf_stride.
// Per request type the address registers mean (ISA doc, NoC memory map):
//   write (not inline):  TARG = local source (+ own x/y: acks return there), RET = destination
//   write (inline):      TARG = destination, data in AT_DATA, RET unused
//   read:                TARG = remote source, RET = local destination (+ own x/y)
//   atomic:              TARG = destination word, RET = where the old value goes (non-posted only)
namespace noc {
inline constexpr uint32_t kNumNocs = 2;
inline constexpr uint32_t kNumCmdBufs = 4;

// Command-buffer registers whose offsets are the same on WH and BH.
inline constexpr uint32_t kTargAddrLo = 0x00;
inline constexpr uint32_t kTargAddrMid = 0x04;
inline constexpr uint32_t kTargAddrHi = 0x08;
inline constexpr uint32_t kRetAddrLo = 0x0C;
inline constexpr uint32_t kRetAddrMid = 0x10;
inline constexpr uint32_t kRetAddrHi = 0x14;
inline constexpr uint32_t kPacketTag = 0x18;
inline constexpr uint32_t kCtrl = 0x1C;     // NOC_CTRL: request type and flags
inline constexpr uint32_t kAtLenBe = 0x20;  // length, byte-enable mask or atomic opcode

// NIU-wide blocks (offset from the NIU base, i.e. command buffer 0's window).
inline constexpr uint32_t kCfgBase = 0x100;     // NOC_CFG(n) = kCfgBase + 4 * n
inline constexpr uint32_t kStatusBase = 0x200;  // NOC_STATUS(n) = kStatusBase + 4 * n (counters)

// Addressing: a 36-bit tile-local address plus 6-bit x and y. The low 32 bits go to *_ADDR_LO,
// bits 35..32 to the low nibble of *_ADDR_MID; where the coordinates go is per arch
// (ArchMap::noc.coord_reg / coord_shift).
inline constexpr uint32_t kLocalAddrBits = 36;
inline constexpr uint64_t kLocalAddrLimit = uint64_t{1} << kLocalAddrBits;
inline constexpr uint32_t kMidLocalMask = 0xF;  // local address bits 35..32 in *_ADDR_MID
inline constexpr uint32_t kCoordBits = 6;
inline constexpr uint32_t kCoordLimit = 1u << kCoordBits;  // x, y < 64
inline constexpr uint32_t kCoordMask = kCoordLimit - 1;
// Unicast coordinate field: x in [5:0], y in [11:6]. The same layout is used by NOC_NODE_ID.
inline constexpr uint32_t kUnicastCoordBits = 2 * kCoordBits;
// Multicast rectangle field: end_x [5:0], end_y [11:6], start_x [17:12], start_y [23:18].
// Start > end on an axis means the span wraps around the edge of the grid.
inline constexpr uint32_t kMcastEndXShift = 0;
inline constexpr uint32_t kMcastEndYShift = 6;
inline constexpr uint32_t kMcastStartXShift = 12;
inline constexpr uint32_t kMcastStartYShift = 18;

// NOC_CTRL.
inline constexpr uint32_t kCtrlCmdRead = 0x0;  // bits [1:0]: request type
inline constexpr uint32_t kCtrlCmdAtomic = 0x1;
inline constexpr uint32_t kCtrlCmdWrite = 0x2;
inline constexpr uint32_t kCtrlCmdMask = 0x3;
inline constexpr uint32_t kCtrlWrBe = 1u << 2;          // AT_LEN_BE is a byte-enable mask
inline constexpr uint32_t kCtrlWrInline = 1u << 3;      // data comes from AT_DATA
inline constexpr uint32_t kCtrlRespMarked = 1u << 4;    // non-posted: ack / response wanted
inline constexpr uint32_t kCtrlBrcstPacket = 1u << 5;   // multicast
inline constexpr uint32_t kCtrlVcLinked = 1u << 6;      // more requests of this transaction follow
inline constexpr uint32_t kCtrlVcStatic = 1u << 7;      // software picks the VC (bits 15..13)
inline constexpr uint32_t kCtrlPathReserve = 1u << 8;   // multicast: reserve the tree first
inline constexpr uint32_t kCtrlMemRdDropAck = 1u << 9;  // overlay only
inline constexpr uint32_t kCtrlStaticVcShift = 13;      // 3 bits: buddy bit 13, class bits 15..14
inline constexpr uint32_t kCtrlStaticVcMask = 0x7u << kCtrlStaticVcShift;
inline constexpr uint32_t kCtrlBrcstYMajor = 1u << 16;  // NOC_CMD_BRCST_XY: 1 = Y is the major axis
inline constexpr uint32_t kCtrlBrcstSrcInclude = 1u << 17;
inline constexpr uint32_t kCtrlArbPriorityShift = 27;  // 4 bits
inline constexpr uint32_t kCtrlL1AccAtEn = 1u << 31;   // BH only, unusable (HW bug): never set

// Virtual channels (3-bit static VC number: class bits 00/01 unicast, 10 multicast).
inline constexpr uint32_t kVcUnicastMax = 3;
inline constexpr uint32_t kVcMulticastMin = 4;
inline constexpr uint32_t kVcMulticastMax = 5;
inline constexpr uint32_t kDefaultUnicastVc = 1;    // NOC_UNICAST_WRITE_VC (also used for reads)
inline constexpr uint32_t kDefaultMulticastVc = 4;  // NOC_MULTICAST_WRITE_VC

// NOC_PACKET_TAG.
inline constexpr uint32_t kTagHeaderStore = 1u << 9;
inline constexpr uint32_t kTagTransactionIdShift = 10;  // 4 bits
inline constexpr uint32_t kMaxTransactionId = 0xF;
inline constexpr uint32_t kNumTransactionIds = kMaxTransactionId + 1;

// NOC_AT_LEN_BE for atomics.
inline constexpr uint32_t kAtInd32Shift = 0;      // which 32-bit word of the aligned 16 B (2 bits)
inline constexpr uint32_t kAtWrapShift = 2;       // increment wraps at bit (wrap + 1); 31 = 32-bit
inline constexpr uint32_t kAtInd32SrcShift = 10;  // source word index for the returned value
inline constexpr uint32_t kAtInsShift = 12;       // opcode
inline constexpr uint32_t kAtInsIncrGet = 1;      // add AT_DATA, return the old value
inline constexpr uint32_t kAtInsSwap4B = 7;
inline constexpr uint32_t kAtInsAccBlackhole = 9;  // BH only
inline constexpr uint32_t kAtWrap32 = 31;

// NOC_CMD_CTRL: write kCmdCtrlSend to launch; reads kCmdCtrlReady once the buffer may be reused.
inline constexpr uint32_t kCmdCtrlSend = 1;
inline constexpr uint32_t kCmdCtrlReady = 0;

// NOC_NODE_ID: own x [5:0], y [11:6] in this NoC's coordinate space.
inline constexpr uint32_t kNodeIdXShift = 0;
inline constexpr uint32_t kNodeIdYShift = 6;

// NIU counters: index n is read at NIU base + kStatusBase + 4 * n. 32-bit wrapping except the
// per-transaction-ID ones, which are 8 bits and count up and down.
namespace status {
inline constexpr uint32_t kMstAtomicRespReceived = 0x0;
inline constexpr uint32_t kMstWrAckReceived = 0x1;
inline constexpr uint32_t kMstRdRespReceived = 0x2;
inline constexpr uint32_t kMstRdDataWordReceived = 0x3;
inline constexpr uint32_t kMstCmdAccepted = 0x4;
inline constexpr uint32_t kMstRdReqSent = 0x5;
inline constexpr uint32_t kMstNonpostedAtomicSent = 0x6;
inline constexpr uint32_t kMstPostedAtomicSent = 0x7;
inline constexpr uint32_t kMstNonpostedWrDataWordSent = 0x8;
inline constexpr uint32_t kMstPostedWrDataWordSent = 0x9;
inline constexpr uint32_t kMstNonpostedWrReqSent = 0xA;
inline constexpr uint32_t kMstPostedWrReqSent = 0xB;
inline constexpr uint32_t kMstNonpostedWrReqStarted = 0xC;
inline constexpr uint32_t kMstPostedWrReqStarted = 0xD;
inline constexpr uint32_t kMstRdReqStarted = 0xE;
inline constexpr uint32_t kMstNonpostedAtomicStarted = 0xF;
// Requests with this transaction ID still waiting for their ack / response.
constexpr uint32_t mst_reqs_outstanding_id(uint32_t id) {
    return 0x10 + id;
}
// Writes with this transaction ID whose data the NIU has not finished reading from local L1.
constexpr uint32_t mst_write_reqs_outgoing_id(uint32_t id) {
    return 0x20 + id;
}
inline constexpr uint32_t kSlvAtomicRespSent = 0x30;
inline constexpr uint32_t kSlvWrAckSent = 0x31;
inline constexpr uint32_t kSlvRdRespSent = 0x32;
inline constexpr uint32_t kSlvRdDataWordSent = 0x33;
inline constexpr uint32_t kSlvReqAccepted = 0x34;
inline constexpr uint32_t kSlvRdReqReceived = 0x35;
inline constexpr uint32_t kSlvNonpostedAtomicReceived = 0x36;
inline constexpr uint32_t kSlvPostedAtomicReceived = 0x37;
inline constexpr uint32_t kSlvNonpostedWrDataWordReceived = 0x38;
inline constexpr uint32_t kSlvPostedWrDataWordReceived = 0x39;
inline constexpr uint32_t kSlvNonpostedWrReqReceived = 0x3A;
inline constexpr uint32_t kSlvPostedWrReqReceived = 0x3B;
inline constexpr uint32_t kSlvNonpostedWrReqStarted = 0x3C;
inline constexpr uint32_t kSlvPostedWrReqStarted = 0x3D;
inline constexpr uint32_t kCount = 0x3E;
}  // namespace status

// Alignment of L1 <-> L1 transfers: source and destination congruent mod 16 (DRAM needs 32).
inline constexpr uint32_t kL1Alignment = 16;
// Addresses at or above this are MMIO in Tensix and Ethernet tiles, below it L1.
inline constexpr uint32_t kMmioStart = 0xFF000000;
}  // namespace noc

// Overlay stream registers used as hardware counters (credits). Stream s, register index r:
//   common::kStreamRegsBase + s * common::kStreamRegSpace + r * 4.
// The register indices differ per arch (ArchMap::stream). The "space available" counter is a
// 17-bit words-free field: writing v << kWordsFreeIncShift to the *_UPDATE register adds v
// (mod 2^17, so a two's-complement v subtracts); writing the DEST_BUF_SIZE register reloads it.
namespace stream {
inline constexpr uint32_t kRemoteDestBufWordsFreeInc = 6;  // REMOTE_DEST_BUF_WORDS_FREE_INC
inline constexpr uint32_t kWordsFreeIncShift = kRemoteDestBufWordsFreeInc;
// REMOTE_DEST_WORDS_FREE width (MEM_WORD_ADDR_WIDTH).
inline constexpr uint32_t kWordsFreeBits = 17;
inline constexpr uint32_t kWordsFreeMask = (1u << kWordsFreeBits) - 1;
inline constexpr uint32_t kNumStreamsTensix = 64;  // NOC_NUM_STREAMS (ERISC: ArchMap::eth_streams)
}  // namespace stream

// Ethernet TX queues (TT-link). TXQ q lives at common::kEthTxqBase + q * common::kEthTxqStride;
// local TXQ q talks to the peer's RXQ q.
namespace eth {
inline constexpr uint32_t kTxqCtrl = 0x00;
inline constexpr uint32_t kTxqCmd = 0x04;
inline constexpr uint32_t kTxqStatus = 0x08;
inline constexpr uint32_t kTxqMaxPktSizeBytes = 0x0C;
inline constexpr uint32_t kTxqBurstLen = 0x10;
inline constexpr uint32_t kTxqTransferStartAddr = 0x14;  // local L1 source (16-B aligned)
inline constexpr uint32_t kTxqTransferSizeBytes = 0x18;  // multiple of 16
inline constexpr uint32_t kTxqDestAddr = 0x1C;           // peer L1 (16-B aligned) or register
inline constexpr uint32_t kTxqCtrlWord = 0x20;
inline constexpr uint32_t kTxqTransferCnt = 0x30;
inline constexpr uint32_t kTxqPktStartCnt = 0x34;
inline constexpr uint32_t kTxqPktEndCnt = 0x3C;
inline constexpr uint32_t kTxqWordCnt = 0x40;
inline constexpr uint32_t kTxqRemoteRegData = 0x44;
inline constexpr uint32_t kTxqRemoteSeqTimeout = 0x48;
inline constexpr uint32_t kTxqLocalSeqUpdateTimeout = 0x4C;
inline constexpr uint32_t kTxqDestMacHi = 0x50;
inline constexpr uint32_t kTxqDestMacLo = 0x54;
inline constexpr uint32_t kTxqSrcMacHi = 0x58;
inline constexpr uint32_t kTxqSrcMacLo = 0x5C;
inline constexpr uint32_t kTxqEthType = 0x60;
inline constexpr uint32_t kTxqMinPacketSizeWords = 0x64;
inline constexpr uint32_t kTxqResendCnt = 0x68;
inline constexpr uint32_t kTxqDataPacketAcceptAhead = 0x6C;
inline constexpr uint32_t kTxqTxpktCfgSelSw = 0x80;  // BH only
inline constexpr uint32_t kTxqTxpktCfgSelHw = 0x84;  // BH only

// ETH_TXQ_CMD values (one-hot).
inline constexpr uint32_t kCmdRawPacket = 0x1;
inline constexpr uint32_t kCmdDataPacket = 0x2;      // TT-link L1 write, resent until acked
inline constexpr uint32_t kCmdRemoteRegWrite = 0x4;  // TT-link MMIO write of REMOTE_REG_DATA
inline constexpr uint32_t kCmdMacQueueFlush = 0x8;

// ETH_TXQ_CTRL bits.
inline constexpr uint32_t kTxqCtrlKeepalive = 1u << 0;  // TT-link mode (packet resend)
inline constexpr uint32_t kTxqCtrlUseType = 1u << 2;
inline constexpr uint32_t kTxqCtrlDisDrop = 1u << 3;

// ETH_TXQ_STATUS (BH): command still being latched.
inline constexpr uint32_t kTxqStatusCmdOngoing = 1u << 16;

// TT-link L1 write packets: addresses and size in 16-byte words.
inline constexpr uint32_t kDataAlignment = 16;
inline constexpr uint32_t kRemoteRegAlignment = 4;
inline constexpr uint32_t kDefaultAcceptAhead = 32;  // DATA_PACKET_ACCEPT_AHEAD at kernel start

// Reset values (fabric-protocol.md §5.3): a data command larger than MAX_PKT_SIZE_BYTES goes as
// several frames of at most that many bytes, in whole 16-B words (1500 -> 1488).
inline constexpr uint32_t kTxqMaxPktSizeReset = 1500;
inline constexpr uint32_t kTxqBurstLenReset = 8;
inline constexpr uint32_t kMaxFramePayload = kTxqMaxPktSizeReset / kDataAlignment * kDataAlignment;
// TT-link sequence numbers are 8 bits: Go-Back-N has at most 2^8 - 1 frames unacknowledged.
inline constexpr uint32_t kTtLinkSeqBits = 8;
// The link (seeds/002): 100 Gb/s per direction, packet headers included; every frame costs
// 50 B on the wire beside its payload (14 B raw packet header, 16 B TT-link header, 16 B MAC
// header, 4 B CRC). Blackhole's rate is not in the references: the same is used there. The
// model's link, the router's TXQ feeding and the benchmarks' capacity all take these.
inline constexpr uint32_t kLinkMbps = 100'000;
inline constexpr uint32_t kFrameOverheadBytes = 50;

// RX queues: RXQ q at ArchMap::eth.rxq_base + q * kRxqStride.
inline constexpr uint32_t kRxqStride = 0x1000;
inline constexpr uint32_t kRxqCtrl = 0x00;
inline constexpr uint32_t kRxqBufPtr = 0x08;
inline constexpr uint32_t kRxqBufStartWordAddr = 0x0C;
inline constexpr uint32_t kRxqBufSizeWords = 0x10;
inline constexpr uint32_t kRxqWordCnt = 0x14;
inline constexpr uint32_t kRxqPktEndCnt = 0x28;
inline constexpr uint32_t kRxqLocalRxSeqNum = 0x40;
inline constexpr uint32_t kRxqRemoteRxSeqNum = 0x44;
inline constexpr uint32_t kRxqTileHeaderFormat = 0x48;
inline constexpr uint32_t kRxqPacketDropCnt = 0x4C;
inline constexpr uint32_t kRxqOutstandingWrCnt = 0x50;
inline constexpr uint32_t kRxqCtrlPacketMode = 1u << 1;
inline constexpr uint32_t kRxqCtrlBufWrap = 1u << 2;
inline constexpr uint32_t kRxqCtrlForceBpressure = 1u << 3;
}  // namespace eth

// Which NIU address register carries the x/y coordinates.
enum class NocCoordReg : uint8_t { Mid = 0, Hi = 1 };

// NIU registers and behaviour that differ per arch (offsets from a command buffer's base).
struct NocLayout {
    uint32_t at_data;                    // NOC_AT_DATA
    uint32_t at_len_be_1;                // NOC_AT_LEN_BE_1, or kNoRegister
    uint32_t cmd_ctrl;                   // NOC_CMD_CTRL
    uint32_t node_id;                    // NOC_NODE_ID
    uint32_t endpoint_id;                // NOC_ENDPOINT_ID
    uint32_t clear_outstanding_req_cnt;  // write a mask of transaction IDs to zero their counters
    NocCoordReg coord_reg;               // where x/y go: *_ADDR_MID (WH) or *_ADDR_HI (BH)
    uint32_t coord_shift;                // bit of that register where the coordinate field starts
    bool inline_to_l1_unsafe;  // BH-86: inline writes/atomics to L1 can hang under back-pressure
};

// Overlay stream register indices (see stream::). kNoRegister where the arch has none.
struct StreamRegIndex {
    uint32_t remote_src;             // STREAM_REMOTE_SRC (firmware uses it as scratch)
    uint32_t remote_dest_buf_start;  // STREAM_REMOTE_DEST_BUF_START
    uint32_t remote_dest_buf_size;   // STREAM_REMOTE_DEST_BUF_SIZE: write reloads words-free
    uint32_t phase_auto_cfg_ptr;     // STREAM_PHASE_AUTO_CFG_PTR
    uint32_t buf_space_available;    // STREAM_BUF_SPACE_AVAILABLE
    uint32_t remote_dest_buf_space_available_update;  // inc-on-write (value << 6)
    uint32_t remote_dest_buf_space_available;         // read: words-free counter
    uint32_t firmware_scratch;                        // FIRMWARE_SCRATCH
};

// Ethernet queue details that differ per arch.
struct EthLayout {
    uint32_t rxq_base;                 // RXQ 0
    uint32_t txq_busy_reg;             // register polled for "queue busy" (offset in the TXQ)
    uint32_t txq_busy_mask;            // busy when (reg & mask) != 0
    bool txq_busy_cmd_readback;        // BH-55: read ETH_TXQ_CMD before polling ETH_TXQ_STATUS
    uint32_t remote_reg_write_queues;  // bit q set: TXQ q may send remote register writes
};

// The Ethernet port's link status as the base firmware publishes it in the eth core's L1 (one word;
// firmware and the host read it, the model keeps it current). Facts: host-and-pcie.md §2.4 (WH
// base firmware "link status 0x1ED4 (==6 up)"; BH boot_results eth_status.port_status at 0x7CC04:
// 1 up, 2 down). Both words lie outside the application window [app_fw_base, eth_l1_usable_top):
// in the base firmware region on WH, in the syseng region above it on BH.
struct EthLinkStatus {
    uint32_t addr;  // L1 address of the word
    uint32_t up;    // the link is up
    uint32_t down;  // the link is down (or the port is not connected)
};

// A window of the Ethernet core's L1 that an image is linked into: [base, base + size).
struct L1Window {
    uint32_t base;
    uint32_t size;
    constexpr uint32_t end() const { return base + size; }
    constexpr bool overlaps(uint32_t begin, uint32_t stop) const {
        return begin < end() && base < stop;
    }
};

// What differs between arches, for the Ethernet core tile.
struct ArchMap {
    Arch arch;
    const char* name;
    uint32_t aiclk_mhz;          // core clock: cycles per microsecond
    uint32_t eth_l1_size;        // ERISC L1 (bytes), mapped at address 0
    uint32_t eth_l1_usable_top;  // first byte above what firmware may use (syseng/barrier above)
    uint32_t local_data_ram_size;
    uint32_t local_data_ram_reserved;  // bytes at the bottom of local RAM owned by base firmware
    uint32_t app_fw_base;              // where application firmware is linked (FIRMWARE_BASE)
    uint32_t app_fw_size;              // application firmware region size
    uint32_t launch_app_flag;          // base FW jumps to app_fw_base when this L1 word is set
    // First L1 byte above every firmware image the chip's own software places low in L1 (base
    // firmware, both ERISCs' firmware slots): where the reference loads kernels.
    uint32_t l1_unreserved_base;
    // Where the fabric router images (firmware/router) are linked: the application window where it
    // is large enough, else a window of its own at l1_unreserved_base. The router's L1 block
    // (protocol/fabric.h router_l1_base) starts above it.
    L1Window router_fw;
    // Where the router images' start-up code goes when router_fw has no room for it (linker
    // section .text_cold): a window at the top of the router's L1 block, which the block then ends
    // below (protocol/fabric.h router_l1_top). Size 0: in router_fw with the rest of the image.
    L1Window router_cold;
    uint32_t noc_cmd_buf_stride;  // NOC command-buffer spacing
    uint32_t noc_word_bytes;      // NOC flit width (bytes per cycle per link)
    uint32_t noc_max_burst_bytes;
    uint32_t eth_tx_queues;
    uint32_t eth_streams;  // overlay streams on an ERISC tile
    EthLinkStatus link_status;
    NocLayout noc;
    StreamRegIndex stream;
    EthLayout eth;
};

inline constexpr ArchMap kWormholeB0{
    .arch = Arch::WormholeB0,
    .name = "wormhole_b0",
    .aiclk_mhz = 1000,
    .eth_l1_size = 256 * 1024,
    .eth_l1_usable_top = 256 * 1024 - 32,  // MAX_SIZE: last 32 B are the host barrier
    .local_data_ram_size = 4 * 1024,
    .local_data_ram_reserved = 0x600,  // first 1.5 KiB: TT base firmware
    .app_fw_base = 0x9040,             // FIRMWARE_BASE
    .app_fw_size = 0x11000 - 0x9040,   // up to ROUTING_FW_RESERVED_BASE
    .launch_app_flag = 0x9004,         // LAUNCH_ERISC_APP_FLAG
    // ERISC_L1_UNRESERVED_BASE with the routing firmware's 28 KiB at 0x11000 kept free: the base
    // firmware carries the host's accesses to remote chips there (protocol/erisc_remote_access.h)
    .l1_unreserved_base = 0x18000,
    .router_fw = {.base = 0x9040, .size = 0x11000 - 0x9040},  // the application window
    // 2 KiB right below the test mailbox (0x3FBE0, protocol/test_mailbox.h), for code the 2D
    // router's 32 KiB window has no room for. Taken from the router's slots, where this much was
    // still free with the default slot counts on the t3k and the 4x4 mesh (7/14 and 6/12 at
    // 4352 B); 6 KiB cost the 4x4 a slot per channel and 14 % of its all-to-all rate.
    .router_cold = {.base = 0x3FBE0 - 0x800, .size = 0x800},
    .noc_cmd_buf_stride = 0x400,
    .noc_word_bytes = 32,
    .noc_max_burst_bytes = 8192,
    .eth_tx_queues = 2,
    .eth_streams = 32,
    // Up: silicon's 6. Down: 1, what our base firmware publishes for a failed or unconnected
    // port (silicon has several non-6 codes; 1 is one of them, and every non-6 value is not up).
    .link_status = {.addr = 0x1ED4, .up = 6, .down = 1},
    .noc =
        {
            .at_data = 0x24,
            .at_len_be_1 = kNoRegister,
            .cmd_ctrl = 0x28,
            .node_id = 0x2C,
            .endpoint_id = 0x30,
            .clear_outstanding_req_cnt = 0x50,
            .coord_reg = NocCoordReg::Mid,  // MID[3:0] = address bits 35..32, MID[27:4] = x/y
            .coord_shift = 4,
            .inline_to_l1_unsafe = false,
        },
    .stream =
        {
            .remote_src = 0,
            .remote_dest_buf_start = 3,
            .remote_dest_buf_size = 4,
            .phase_auto_cfg_ptr = 12,
            .buf_space_available = 28,
            .remote_dest_buf_space_available_update = 34,
            .remote_dest_buf_space_available = 64,
            .firmware_scratch = 247,
        },
    .eth =
        {
            .rxq_base = 0xFFB92000,
            .txq_busy_reg = eth::kTxqCmd,  // reads non-zero until the command is latched
            .txq_busy_mask = 0xFFFFFFFF,
            .txq_busy_cmd_readback = false,
            .remote_reg_write_queues = 0x1,
        },
};

inline constexpr ArchMap kBlackhole{
    .arch = Arch::Blackhole,
    .name = "blackhole",
    .aiclk_mhz = 1350,
    .eth_l1_size = 512 * 1024,
    .eth_l1_usable_top = 0x70000,  // top 64 KiB reserved for syseng firmware
    .local_data_ram_size = 8 * 1024,
    .local_data_ram_reserved = 0x700,  // E0: base firmware
    .app_fw_base = 0x3330,             // AERISC firmware base
    .app_fw_size = 24 * 1024,
    .launch_app_flag = 0x3320,  // void launch flag slot just below the firmware base
    // ERISC_L1_UNRESERVED_BASE = align64(MAP_END 0xF330 + 25 KiB): above the AERISC firmware
    // (0x3330, 24 KiB) and the subordinate ERISC's firmware (0x9330, 24 KiB) and what follows it.
    .l1_unreserved_base = 0x15740,
    // The 24 KiB application window has no room left for the router: 48 KiB of its own where the
    // reference loads kernels (the fabric router among them), clear of the subordinate's firmware.
    // 48 KiB is half as much again as Wormhole's 32 KiB window, which bounds the router's common
    // source anyway; every KiB more would come out of the router's slots above it.
    .router_fw = {.base = 0x15740, .size = 48 * 1024},
    .router_cold = {.base = 0, .size = 0},  // the 48 KiB window has room for all of it
    .noc_cmd_buf_stride = 0x800,
    .noc_word_bytes = 64,
    .noc_max_burst_bytes = 16384,
    .eth_tx_queues = 3,
    .eth_streams = 32,
    .link_status = {.addr = 0x7CC04, .up = 1, .down = 2},  // boot_results eth_status.port_status
    .noc =
        {
            .at_data = 0x28,
            .at_len_be_1 = 0x24,
            .cmd_ctrl = 0x40,
            .node_id = 0x44,
            .endpoint_id = 0x48,
            .clear_outstanding_req_cnt = 0x60,
            .coord_reg = NocCoordReg::Hi,  // MID[3:0] = address bits 35..32, HI[23:0] = x/y
            .coord_shift = 0,
            .inline_to_l1_unsafe = true,
        },
    .stream =
        {
            .remote_src = 4,
            .remote_dest_buf_start = 8,
            .remote_dest_buf_size = 10,
            .phase_auto_cfg_ptr = kNoRegister,
            .buf_space_available = 260,
            .remote_dest_buf_space_available_update = 270,
            .remote_dest_buf_space_available = 297,
            .firmware_scratch = 208,
        },
    .eth =
        {
            .rxq_base = 0xFFB94000,
            .txq_busy_reg = eth::kTxqStatus,  // ETH_TXQ_CMD always reads 0 on BH
            .txq_busy_mask = eth::kTxqStatusCmdOngoing,
            .txq_busy_cmd_readback = true,
            // The ISA doc lets TXQ0 and TXQ1 send MMIO writes, but only one peer RXQ can accept
            // them and the reference firmware configures RXQ0 for it: treat TXQ0 as the only one.
            .remote_reg_write_queues = 0x1,
        },
};

constexpr const ArchMap& arch_map(Arch a) {
    return a == Arch::Blackhole ? kBlackhole : kWormholeB0;
}

static_assert(kWormholeB0.app_fw_base + kWormholeB0.app_fw_size <= kWormholeB0.eth_l1_usable_top);
static_assert(kBlackhole.app_fw_base + kBlackhole.app_fw_size <= kBlackhole.eth_l1_usable_top);
static_assert(simctrl::kBase + simctrl::kSize <= common::kLocalDataRamBase);

// The router's cold window, when it has one: above every image window and the reserved low L1,
// below the syseng area, clear of the link status word, 16-B aligned.
constexpr bool router_cold_window_ok(const ArchMap& a) {
    const L1Window& c = a.router_cold;
    if (c.size == 0) return c.base == 0;
    const bool above_images = c.base >= a.router_fw.end() &&
                              c.base >= a.app_fw_base + a.app_fw_size &&
                              c.base >= a.l1_unreserved_base;
    return above_images && c.end() <= a.eth_l1_usable_top &&
           !c.overlaps(a.link_status.addr, a.link_status.addr + 4) &&
           c.base % noc::kL1Alignment == 0 && c.size % noc::kL1Alignment == 0;
}

// The router window: the application window itself, or a window of its own clear of it and of
// every firmware slot below l1_unreserved_base; either way below the syseng area (and so clear
// of the link status word when that lies there), 16-B aligned like every L1 transfer.
constexpr bool router_window_ok(const ArchMap& a) {
    const L1Window app{a.app_fw_base, a.app_fw_size};
    const bool is_app_window = a.router_fw.base == app.base && a.router_fw.size == app.size;
    const bool own_window = a.router_fw.base >= a.l1_unreserved_base &&
                            !app.overlaps(a.router_fw.base, a.router_fw.end());
    const bool below_syseng = a.router_fw.end() <= a.eth_l1_usable_top;
    const bool clear_of_link_status =
        !a.router_fw.overlaps(a.link_status.addr, a.link_status.addr + 4);
    const bool clear_of_launch_flag =
        !a.router_fw.overlaps(a.launch_app_flag, a.launch_app_flag + 4);
    return (is_app_window || own_window) && below_syseng && clear_of_link_status &&
           clear_of_launch_flag && a.router_fw.base % noc::kL1Alignment == 0 &&
           a.router_fw.size > 0 && router_cold_window_ok(a);
}

// Consistency of the per-arch layouts with the common blocks they sit in.
constexpr bool layout_ok(const ArchMap& a) {
    const bool cmd_buf_fits = a.noc.cmd_ctrl + 4 <= a.noc_cmd_buf_stride &&
                              a.noc.clear_outstanding_req_cnt + 4 <= noc::kCfgBase;
    const bool coords_fit = a.noc.coord_shift + 4 * noc::kCoordBits <= 32 &&
                            (a.noc.coord_reg == NocCoordReg::Hi || a.noc.coord_shift >= 4);
    const bool streams_fit =
        a.eth_streams <= stream::kNumStreamsTensix &&
        a.stream.remote_dest_buf_space_available * 4 < common::kStreamRegSpace &&
        a.stream.remote_dest_buf_space_available_update * 4 < common::kStreamRegSpace;
    const bool eth_ok = a.eth_tx_queues >= 1 && a.eth_tx_queues <= 3 &&
                        (a.eth.remote_reg_write_queues >> a.eth_tx_queues) == 0 &&
                        a.eth.txq_busy_reg < common::kEthTxqStride;
    // Nothing firmware loads or places (the application window) may cover the link status word.
    const bool link_status_clear =
        a.link_status.addr % 4 == 0 && a.link_status.addr + 4 <= a.eth_l1_size &&
        (a.link_status.addr + 4 <= a.app_fw_base || a.link_status.addr >= a.eth_l1_usable_top) &&
        a.link_status.up != a.link_status.down;
    return cmd_buf_fits && coords_fit && streams_fit && eth_ok && link_status_clear &&
           router_window_ok(a);
}
static_assert(layout_ok(kWormholeB0));
static_assert(layout_ok(kBlackhole));
static_assert(kWormholeB0.noc_cmd_buf_stride * noc::kNumCmdBufs <= common::kNocInstanceStride);
static_assert(kBlackhole.noc_cmd_buf_stride * noc::kNumCmdBufs <= common::kNocInstanceStride);

}  // namespace hal
