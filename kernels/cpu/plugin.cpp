// The plugin library's one exported symbol.
#include "provider_table.hpp"
#include "seatrt/cpp/plugin.hpp"

namespace {
const seatrt_plugin& kPlugin = seatrt::cpu::plugin_descriptor();
}
SEATRT_DEFINE_PLUGIN(kPlugin)
