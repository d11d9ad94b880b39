// A shared library that is not a seatrt plugin: it exports a function, but
// not seatrt_plugin_init.
extern "C" __attribute__((visibility("default"))) int seatrt_test_not_a_plugin(void) { return 42; }
