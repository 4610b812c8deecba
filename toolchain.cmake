# riscv64-unknown-elf-gcc targeting the ERISC: rv32im / ilp32, freestanding C++20, picolibc.
# Debian's RISC-V g++ ships no libstdc++, so C++ is compiled freestanding and linked through the
# C driver against picolibc (firmware/README.md).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_OBJCOPY riscv64-unknown-elf-objcopy CACHE FILEPATH "")
set(CMAKE_OBJDUMP riscv64-unknown-elf-objdump CACHE FILEPATH "")

# Plain rv32im selects picolibc's rv32im/ilp32 multilib (GCC 12 maps no "_zicsr" variant to it);
# CSR reads are emitted with .insn in hal/csr.h.
set(FABRIC_RV_ARCH "-march=rv32im -mabi=ilp32 -mcmodel=medlow")
set(CMAKE_C_FLAGS_INIT "${FABRIC_RV_ARCH} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${FABRIC_RV_ARCH} --specs=picolibc.specs -ffreestanding -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit -ffunction-sections -fdata-sections")
set(CMAKE_ASM_FLAGS_INIT "${FABRIC_RV_ARCH}")
# Link through the C driver: there is no libstdc++ to pull in.
set(CMAKE_CXX_LINK_EXECUTABLE "<CMAKE_C_COMPILER> <FLAGS> <CMAKE_CXX_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
# <FLAGS> (the compile flags, with --specs) are on the link line already.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
