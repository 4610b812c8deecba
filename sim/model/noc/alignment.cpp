#include "noc/alignment.h"

#include "hal/arch_map.h"
#include "noc/constants.h"

namespace sim::noc {

AddrClass addr_class(EndpointKind kind, uint64_t addr) {
    if (kind == EndpointKind::Other) {
        return AddrClass::Other;
    }
    return addr >= hal::noc::kMmioStart ? AddrClass::Mmio : AddrClass::L1;
}

bool length_alignment_ok(AddrClass src_class, uint64_t src, AddrClass dst_class, uint64_t dst,
                         uint32_t len) {
    const auto word_access = [&] {
        return src % kMmioWordBytes == 0 && dst % kMmioWordBytes == 0 && len == kMmioWordBytes;
    };
    const auto congruent = [&](uint32_t m) { return src % m == dst % m; };
    if (src_class == AddrClass::Mmio) {
        if (dst_class == AddrClass::Mmio) {
            return word_access();
        }
        return len <= kMmioWordBytes - src % kMmioWordBytes && congruent(kMmioWordBytes);
    }
    if (dst_class == AddrClass::Mmio) {
        return word_access() && congruent(hal::noc::kL1Alignment);
    }
    if (src_class == AddrClass::L1) {
        return congruent(hal::noc::kL1Alignment);
    }
    return congruent(kOtherAlignment);
}

bool byte_enable_alignment_ok(AddrClass dst_class, uint64_t src, uint64_t dst) {
    if (dst_class == AddrClass::Mmio) {
        return dst % kMmioWordBytes == 0 &&
               src % hal::noc::kL1Alignment == dst % hal::noc::kL1Alignment;
    }
    return dst % kBeWriteBytes == 0 && src % kBeWriteBytes == 0;
}

}  // namespace sim::noc
