# cmake -P script: compile SRC for the ERISC (firmware flags from toolchain.cmake, both -Os and
# -O2) and check the object: no static constructors (.init_array/.ctors) and no undefined symbols
# other than the memory functions GCC may emit in freestanding code (picolibc provides them).
foreach(var CXX NM OBJDUMP ARCH SRC INCLUDE_DIR OUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_freestanding.cmake: ${var} not set")
  endif()
endforeach()

set(flags -std=c++20 -march=rv32im -mabi=ilp32 -mcmodel=medlow --specs=picolibc.specs
  -ffreestanding -fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit
  -ffunction-sections -fdata-sections -Wall -Wextra -Wpedantic -Werror
  -DFABRIC_ARCH_${ARCH} -I${INCLUDE_DIR})

foreach(opt -Os -O2)
  execute_process(COMMAND ${CXX} ${flags} ${opt} -c ${SRC} -o ${OUT}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "freestanding compile (${ARCH} ${opt}) failed:\n${out}${err}")
  endif()

  execute_process(COMMAND ${OBJDUMP} -h ${OUT} OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "objdump failed on ${OUT}")
  endif()
  if(sections MATCHES "\\.init_array|\\.ctors|\\.preinit_array")
    message(FATAL_ERROR "${ARCH} ${opt}: HAL code needs static constructors:\n${sections}")
  endif()

  execute_process(COMMAND ${NM} -u ${OUT} OUTPUT_VARIABLE undefined RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm failed on ${OUT}")
  endif()
  string(REGEX REPLACE "[ \t]*U[ \t]+(memcpy|memset|memmove|memcmp)\n" "" rest "${undefined}")
  string(STRIP "${rest}" rest)
  if(NOT rest STREQUAL "")
    message(FATAL_ERROR "${ARCH} ${opt}: HAL code calls outside the freestanding set:\n${rest}")
  endif()
  message(STATUS "${ARCH} ${opt}: ok")
endforeach()
