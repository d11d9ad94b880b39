#include "seatrt/text/chat_messages.hpp"

#include <string>

namespace seatrt::text {

void prepare_chat_messages(nlohmann::ordered_json& messages) {
  if (!messages.is_array()) throw ChatMessagesError("messages must be an array");
  for (size_t m = 0; m < messages.size(); ++m) {
    auto& message = messages[m];
    if (!message.is_object()) throw ChatMessagesError("messages[" + std::to_string(m) + "] is not an object");
    if (message.contains("tool_calls")) {
      auto& calls = message["tool_calls"];
      if (calls.is_array() && calls.empty()) {
        message.erase("tool_calls");
      } else if (calls.is_array()) {
        for (size_t c = 0; c < calls.size(); ++c) {
          auto& call = calls[c];
          if (!call.is_object() || !call.contains("function") || !call["function"].is_object()) continue;
          auto& function = call["function"];
          if (!function.contains("arguments") || function["arguments"].is_null()) {
            function["arguments"] = nlohmann::ordered_json::object();
            continue;
          }
          auto& arguments = function["arguments"];
          if (!arguments.is_string()) continue;
          const std::string text = arguments.get<std::string>();
          if (text.empty()) {
            arguments = nlohmann::ordered_json::object();
            continue;
          }
          try {
            arguments = nlohmann::ordered_json::parse(text);
          } catch (const nlohmann::json::exception&) {
            throw ChatMessagesError("messages[" + std::to_string(m) + "].tool_calls[" + std::to_string(c) +
                                    "].function.arguments is not valid JSON");
          }
        }
      }
    }
    const bool has_reasoning = message.contains("reasoning") && !message["reasoning"].is_null();
    const bool has_content = message.contains("reasoning_content") && !message["reasoning_content"].is_null();
    if (has_reasoning && !has_content) message["reasoning_content"] = message["reasoning"];
    if (has_content && !has_reasoning) message["reasoning"] = message["reasoning_content"];
  }
}

}  // namespace seatrt::text
