// The arch this firmware image is built for, chosen at compile time:
//   -DFABRIC_ARCH_WORMHOLE_B0   or   -DFABRIC_ARCH_BLACKHOLE
// gives hal::kArch, a reference to the matching ArchMap. Drivers are templates on it:
//   hal::Noc<hal::kArch>, hal::Eth<hal::kArch>, hal::Streams<hal::kArch>.
// Host code (control plane, model, unit tests) does not include this header: it handles both
// arches at run time through hal::arch_map(Arch) or instantiates the drivers for each.
#pragma once

#include "hal/arch_map.h"

#if defined(FABRIC_ARCH_WORMHOLE_B0) && defined(FABRIC_ARCH_BLACKHOLE)
#error "hal/arch.h: define only one of FABRIC_ARCH_WORMHOLE_B0 and FABRIC_ARCH_BLACKHOLE"
#elif defined(FABRIC_ARCH_WORMHOLE_B0)
namespace hal {
inline constexpr const ArchMap& kArch = kWormholeB0;
}
#elif defined(FABRIC_ARCH_BLACKHOLE)
namespace hal {
inline constexpr const ArchMap& kArch = kBlackhole;
}
#else
#error "hal/arch.h: define FABRIC_ARCH_WORMHOLE_B0 or FABRIC_ARCH_BLACKHOLE"
#endif
