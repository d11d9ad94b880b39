// One request's Gemma-4 parser: reasoning and tool calls out of the model's
// output (OutputStream) and, for tool_choice required/named or a JSON
// response_format, the constrained-decoding mask (ConstrainedDecoder).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "constrained_decoder.hpp"
#include "event_sink.hpp"
#include "output_stream.hpp"
#include "request_options.hpp"
#include "seatrt/parser.h"

namespace seatrt::parsers::gemma4 {

class Gemma4Parser {
 public:
  // Throws std::invalid_argument (a message for the client) for an
  // impossible request or a schema that cannot be enforced.
  Gemma4Parser(std::string_view options_toml, const seatrt_parser_request& request);

  void feed(const int32_t* ids, size_t n_ids, std::string_view text, EventSink& sink);
  // Returns the seatrt_finish_reason the client should see.
  int32_t finish(int32_t reason, EventSink& sink);
  // False when decoding is not constrained (now or ever).
  bool allowed_tokens(uint32_t* mask, size_t words);

  const RequestOptions& options() const { return options_; }

 private:
  std::string next_call_id();
  // Whether token `id` (whose text is `piece`) is a control token.
  bool is_control(int32_t id, std::string_view piece) const;

  RequestOptions options_;
  // The host's vocabulary (valid for this parser's life), or null.
  const seatrt_vocab* vocab_ = nullptr;
  // parallel_tool_calls false without a forced call: once a call is
  // complete only these (the stop tokens) are allowed.
  std::vector<int32_t> one_call_stops_;
  std::mt19937_64 rng_;
  std::unique_ptr<OutputStream> stream_;
  std::unique_ptr<ConstrainedDecoder> decoder_;
};

}  // namespace seatrt::parsers::gemma4
