// Catch2's implementation without main(), compiled once for the test
// binaries that write their own (seatrt_catch_runner in tests/CMakeLists.txt).
// Catch's Session is declared only where its implementation is compiled, so
// those mains run it through run_catch_session().
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "catch_runner.hpp"

int run_catch_session(int argc, char** argv) { return Catch::Session().run(argc, argv); }
