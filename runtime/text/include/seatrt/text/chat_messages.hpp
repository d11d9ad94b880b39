// Request messages -> what chat templates expect, as vLLM prepares them
// before apply_chat_template (chat_utils._postprocess_messages): OpenAI
// clients send tool-call arguments as a JSON *string*, while templates such
// as Gemma-4's need a mapping (the 07-09 template raises on a string).
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace seatrt::text {

// A message the template cannot take (e.g. arguments that are not JSON).
class ChatMessagesError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// In place, on a copy the caller owns:
//  - assistant tool_calls[].function.arguments given as a string is decoded
//    as JSON ("" and null become {}); invalid JSON is a ChatMessagesError;
//  - an empty tool_calls list is removed;
//  - reasoning and reasoning_content are mirrored (either one sets both).
void prepare_chat_messages(nlohmann::ordered_json& messages);

}  // namespace seatrt::text
