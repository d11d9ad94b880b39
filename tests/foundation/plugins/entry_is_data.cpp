// Not a usable plugin: it exports the entry symbol as a data object, not a
// function.  Calling it would crash the host; the loader must refuse it.
extern "C" __attribute__((visibility("default"))) const int seatrt_plugin_init = 0;
