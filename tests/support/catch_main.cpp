// Catch2's implementation and main(), compiled once for every test binary
// that has no main of its own (seatrt_catch_main in tests/CMakeLists.txt).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
