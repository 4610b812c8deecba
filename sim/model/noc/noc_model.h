// Everything of the NOC model in one include: the network and NIUs, memories, DRAM channels and
// stream registers.
#pragma once

#include "noc/dram.h"
#include "noc/memory.h"
#include "noc/network.h"
#include "noc/stream_regs.h"
