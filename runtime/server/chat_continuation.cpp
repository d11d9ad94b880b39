#include "chat_continuation.hpp"

#include <string_view>

#include "api_error.hpp"
#include "seatrt/text/python_strip.hpp"

namespace seatrt::server {
namespace {

// transformers' marker, space included: whether the template kept that
// space tells whether it trimmed the message's end (see the header).
constexpr std::string_view kMarker = "CONTINUE_FINAL_MESSAGE_TAG ";
constexpr std::string_view kMarkerWord = "CONTINUE_FINAL_MESSAGE_TAG";

}  // namespace

std::string mark_final_message(nlohmann::ordered_json& messages) {
  auto& final_message = messages.back();
  auto no_text = [] {
    return bad_request("'continue_final_message' needs text to continue: the final message has no content "
                       "(a string, or an array with a text part)",
                       "messages");
  };
  if (!final_message.contains("content")) throw no_text();
  auto& content = final_message["content"];
  if (content.is_string()) {
    std::string text = content.get<std::string>();
    content = text + std::string(kMarker);
    return text;
  }
  if (content.is_array()) {
    for (auto it = content.rbegin(); it != content.rend(); ++it)
      if (it->is_object() && it->contains("text") && (*it)["text"].is_string()) {
        std::string text = (*it)["text"].get<std::string>();
        (*it)["text"] = text + std::string(kMarker);
        return text;
      }
  }
  throw no_text();
}

std::string cut_at_final_message(const std::string& rendered, const std::string& final_text) {
  const size_t at = rendered.rfind(kMarkerWord);
  // Whitespace as Python's str.strip() reads it (Unicode spaces too), as transformers does.
  if (at == std::string::npos || rendered.find(text::python_strip(final_text)) == std::string::npos)
    throw bad_request("'continue_final_message': the chat template does not render the final message's text as "
                      "sent (it drops or rewrites part of it), so the prompt cannot end inside that message",
                      "messages");
  std::string prompt = rendered.substr(0, at);
  if (rendered.compare(at, kMarker.size(), kMarker) != 0) prompt = text::python_strip(prompt, false, true);
  return prompt;
}

std::string chat_echo_text(const nlohmann::ordered_json& messages, bool add_generation_prompt) {
  if (!messages.is_array() || messages.empty()) return "";
  const auto& last = messages.back();
  if (add_generation_prompt && last.value("role", "") != "assistant") return "";
  if (!last.contains("content")) return "";
  const auto& content = last["content"];
  if (content.is_string()) return content.get<std::string>();
  std::string joined;
  if (content.is_array()) {
    bool first = true;
    for (const auto& part : content) {
      if (!part.is_object() || !part.contains("text") || !part["text"].is_string()) continue;
      if (!first) joined += '\n';
      joined += part["text"].get<std::string>();
      first = false;
    }
  }
  return joined;
}

}  // namespace seatrt::server
