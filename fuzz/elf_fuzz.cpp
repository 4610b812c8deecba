// Fuzz target: the ELF loader, and the placement check of what it accepts.
#include "fabric/elf.h"
#include "fabric/input_file.h"
#include "fuzz_target.h"
#include "test_elf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size > fabric::kElfInput.max_bytes) return 0;  // load_file refuses these
    fabric::fuzz::accept_or_refuse([&] {
        const auto image = fabric::ElfImage::parse({data, size}, "fuzz.elf");
        for (const auto arch : {hal::Arch::WormholeB0, hal::Arch::Blackhole}) {
            const auto& map = hal::arch_map(arch);
            try {
                image.check_placement(fabric::erisc_placement(map, map.eth_l1_size));
            } catch (const fabric::Error&) {
            }
        }
        (void)image.symbol("main");
    });
    return 0;
}

namespace fabric::fuzz {

// A small valid image with code, data, bss and symbols (tests/support/test_elf.h).
std::vector<std::string> builtin_seeds() {
    test::TestElf e;
    e.entry = 0x9040;
    e.segments.push_back({0x9040, std::vector<uint8_t>(16, 0x13)});
    test::TestSegment data{0x9100, {1, 2, 3, 4}, 64, test::kPfR | test::kPfW};
    e.segments.push_back(data);
    e.symbols = {{"main", 0x9040}, {"counter", 0x9100}};
    const auto bytes = e.build();
    return {std::string(bytes.begin(), bytes.end())};
}

std::vector<std::string> dictionary() {
    return {std::string("\x7f"
                        "ELF",
                        4),
            std::string("\x01\x01\x01", 3),
            std::string("\xf3\x00", 2),
            std::string("\x02\x00", 2),
            std::string("\x01\x00\x00\x00", 4),
            std::string("\xff\xff\xff\xff", 4),
            std::string("\x00\x00\x00\x80", 4),
            std::string("\x40\x90\x00\x00", 4),
            std::string("\x02\x00\x00\x00", 4),
            std::string("\x20\x00", 2),
            std::string("\x28\x00", 2),
            std::string("\xff\xff", 2)};
}

}  // namespace fabric::fuzz
