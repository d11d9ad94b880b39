// Not a usable plugin: a library whose static initialiser throws while it
// is being opened (a third-party plugin's global constructor failing).  It
// sits in a search path of its own; seats that do not use it must still
// load, and a seat naming a plugin it might have been must hear why it
// could not be read.
#include <stdexcept>

namespace {
struct FailsAtLoad {
  FailsAtLoad() { throw std::runtime_error("the global constructor of libbroken_static_init.so failed"); }
};
const FailsAtLoad kFails;
}  // namespace
