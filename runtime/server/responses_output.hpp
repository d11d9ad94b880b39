// A generation written as a Response (OpenAI's Responses API): the parsed
// output becomes items in the order it comes (a reasoning item, a message
// with one output_text part, function calls), and when streaming each
// change is also an event (response.created ... response.completed) with
// its sequence_number, in the order OpenAI sends them: an item is added,
// its part added, deltas, its text done, its part done, the item done, and
// only then the next item.
//
// Used by serve_generation for Flavor::responses, on the HTTP thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "parser_chain.hpp"

namespace seatrt::server {

class ResponsesOutput {
 public:
  // Writes one stream event (its type, its object); false when the client
  // is gone.  Empty for a response sent whole.
  using Emit = std::function<bool(const std::string& type, const nlohmann::ordered_json& event)>;

  // `echo`: the request's fields the object repeats (responses_request.hpp).
  ResponsesOutput(std::string id, std::string model, int64_t created_at, nlohmann::ordered_json echo, Emit emit);

  // Streaming: response.created and response.in_progress.
  bool start();
  // One event's parsed output.  `logprobs`: its tokens in the chat API's
  // entry form (token, logprob, bytes, top_logprobs), empty when not asked
  // for; they go with the message's text (tokens whose output was reasoning
  // or a call are not part of it).  `completion_tokens`: the choice's count
  // so far (tokens whose output was reasoning are counted as
  // reasoning_tokens).  `last_of_cut`: this is the last event of an output
  // cut by max_output_tokens (a thought it cut is no answer: see .cpp).
  bool add(const ParsedDelta& delta, const nlohmann::ordered_json& logprobs, int64_t completion_tokens,
           bool last_of_cut);
  // Closes the open item and the response: "completed", or "incomplete"
  // (max_output_tokens) when the output was cut by length.  `usage` in the
  // chat API's form (prompt_tokens, completion_tokens, ...).
  bool finish(const std::string& finish_reason, const nlohmann::ordered_json& chat_usage);
  // Streaming: the generation failed after the stream began (response.failed).
  bool fail(const std::string& code, const std::string& message);

  // The Response object as it stands.
  nlohmann::ordered_json response() const;

 private:
  enum class Open { none, reasoning, message, call };
  bool emit(const std::string& type, nlohmann::ordered_json event);
  bool open(Open kind, const ToolCallDelta* call);
  bool close(const char* status);
  nlohmann::ordered_json& item() { return output_.back(); }

  std::string id_;
  std::string model_;
  int64_t created_at_;
  nlohmann::ordered_json echo_;
  Emit emit_;
  int64_t sequence_ = 0;
  std::string status_ = "in_progress";
  nlohmann::ordered_json output_ = nlohmann::ordered_json::array();
  nlohmann::ordered_json usage_;  // null until finish
  nlohmann::ordered_json incomplete_details_;
  nlohmann::ordered_json error_;
  Open open_ = Open::none;
  int32_t open_call_ = -1;           // the parser's index of the open function call
  std::string text_;                 // the open item's text or arguments so far
  nlohmann::ordered_json logprobs_ = nlohmann::ordered_json::array();  // the open message's
  nlohmann::ordered_json pending_logprobs_ = nlohmann::ordered_json::array();  // before any text
  int64_t seen_tokens_ = 0;
  int64_t reasoning_tokens_ = 0;
};

}  // namespace seatrt::server
