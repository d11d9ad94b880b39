#include "seatrt/host/model_check.hpp"

#include "seatrt/host/status.hpp"
#include "seatrt/model/model_session.hpp"
#include "seatrt/model/status.hpp"

namespace seatrt::host {

void check_model(const SeatConfig& seat, SeatPlugins& plugins, std::ostream& out) {
  try {
    model::ModelLoader loader(host_api(), model::model_plugin_candidates(seat, plugins));
    const auto prepared = loader.prepare(seat.model.path);
    out << "model: " << seat.model.path.string() << "\n";
    out << "model architecture plugin: " << prepared->arch_name() << "\n";
    out << "model quantization plugin: " << (prepared->quant_name().empty() ? "none" : prepared->quant_name()) << "\n";
    prepared->inspect([&](const std::string& line) { out << "model " << line << "\n"; });
  } catch (const model::StatusError& e) {
    throw Error(e.code(), std::string("model: ") + e.what());
  }
}

}  // namespace seatrt::host
