// Writes the MEMORY block of the firmware linker script for one arch from hal/arch_map.h, so the
// firmware is placed by the same numbers the host loader checks and the model decodes: APP (the
// application window), ROUTER (the fabric router images' window; on Wormhole the same bytes as
// APP), ROUTER_COLD (their start-up code: a window of its own, or an alias of ROUTER) and LDM
// (the stack).
//   gen_ld_memory <wormhole_b0|blackhole> <out.ld>
#include <cstdio>
#include <cstring>
#include <initializer_list>

#include "hal/arch_map.h"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: gen_ld_memory <wormhole_b0|blackhole> <out.ld>\n");
        return 2;
    }
    const hal::ArchMap* map = nullptr;
    for (const hal::ArchMap* m : {&hal::kWormholeB0, &hal::kBlackhole}) {
        if (std::strcmp(argv[1], m->name) == 0) map = m;
    }
    if (map == nullptr) {
        std::fprintf(stderr, "gen_ld_memory: unknown arch '%s'\n", argv[1]);
        return 2;
    }
    std::FILE* out = std::fopen(argv[2], "w");
    if (out == nullptr) {
        std::perror(argv[2]);
        return 1;
    }
    const uint32_t ldm_user = hal::common::kLocalDataRamBase + map->local_data_ram_reserved;
    std::fprintf(out,
                 "/* Generated from hal/arch_map.h for %s. Do not edit. */\n"
                 "MEMORY\n{\n"
                 "  APP (rwx)    : ORIGIN = 0x%08X, LENGTH = 0x%X\n"
                 "  ROUTER (rwx) : ORIGIN = 0x%08X, LENGTH = 0x%X\n"
                 "  LDM (rw)     : ORIGIN = 0x%08X, LENGTH = 0x%X\n",
                 map->name, map->app_fw_base, map->app_fw_size, map->router_fw.base,
                 map->router_fw.size, ldm_user,
                 map->local_data_ram_size - map->local_data_ram_reserved);
    if (map->router_cold.size != 0) {
        std::fprintf(out, "  ROUTER_COLD (rwx) : ORIGIN = 0x%08X, LENGTH = 0x%X\n}\n",
                     map->router_cold.base, map->router_cold.size);
    } else {
        std::fprintf(out, "}\nREGION_ALIAS(\"ROUTER_COLD\", ROUTER);\n");
    }
    std::fprintf(out, "__launch_app_flag = 0x%08X;\n", map->launch_app_flag);
    return std::fclose(out) == 0 ? 0 : 1;
}
