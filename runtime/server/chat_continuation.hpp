// vLLM's `continue_final_message`: the prompt ends inside the final message,
// so the model continues it ("prefill") instead of starting a new turn.
//
// The semantics are transformers' apply_chat_template(continue_final_message=
// True), which vLLM calls: a marker is appended to the final message's text
// (its last text part when the content is an array of parts), the template is
// rendered without a generation prompt, and the prompt is cut where the
// marker begins.  When the template trimmed the space that ends the marker,
// it trimmed the message's trailing whitespace too, so the cut prompt loses
// its trailing whitespace as well.  A template that drops the marker or the
// message's text cannot be continued: that is a 400, not a silently wrong
// prompt.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace seatrt::server {

// Appends the marker to the final message's text.  `messages` is the
// request's validated array (non-empty; content absent, null, a string or
// text parts).  Returns the final message's text as sent.  Throws
// bad_request (param "messages") when that message has no text to continue.
std::string mark_final_message(nlohmann::ordered_json& messages);

// The rendered prompt up to the marker (see above).  `final_text` is what
// mark_final_message returned.  Throws bad_request when the rendered prompt
// holds no marker or not the final message's text.
std::string cut_at_final_message(const std::string& rendered, const std::string& final_text);

// vLLM's chat `echo`: the text the answer starts with.  The final message's
// content (text parts joined with "\n") when it is in the answer's role:
// with a generation prompt that is "assistant"; without one (a continuation)
// the final message's own role, so any final message is echoed.  Else "".
std::string chat_echo_text(const nlohmann::ordered_json& messages, bool add_generation_prompt);

}  // namespace seatrt::server
