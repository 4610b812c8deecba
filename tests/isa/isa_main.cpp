// Catch2 main for the RV32IM self-tests (kept in its own file so test edits do not rebuild it).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
