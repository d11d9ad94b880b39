// For test binaries with their own main(): runs Catch2's session (the
// implementation is compiled once, in catch_runner.cpp).
#pragma once

int run_catch_session(int argc, char** argv);
