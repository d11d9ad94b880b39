// Test harness for the Gemma-4 parsers: a seatrt_vocab built from a token
// list, and an event recorder that assembles what a client would see (the
// OpenAI message and the streamed delta sequence) while checking the
// strict-client rules on every tool-call delta.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_sink.hpp"
#include "seatrt/parser.h"

namespace seatrt::parsers::test {

// A vocabulary from explicit token texts; `special` marks control tokens.
class TestVocab {
 public:
  struct Token {
    std::string bytes;
    bool special;
  };
  explicit TestVocab(std::vector<Token> tokens);
  const seatrt_vocab* get() const { return &vocab_; }
  int32_t id(std::string_view text) const;
  const std::string& bytes(int32_t id) const { return tokens_[static_cast<size_t>(id)].bytes; }
  bool special(int32_t id) const { return tokens_[static_cast<size_t>(id)].special; }
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }

 private:
  std::vector<Token> tokens_;
  std::map<std::string, int32_t, std::less<>> ids_;
  seatrt_vocab vocab_{};
};

// The Gemma-4 control tokens as specials (plus the given ordinary pieces).
std::vector<TestVocab::Token> gemma4_specials();

class Recorder final : public gemma4::EventSink {
 public:
  // Starts the deltas of one feed()/finish() call.
  void begin_step() { steps_.push_back(nlohmann::json::array()); }

  void content(std::string_view text) override;
  void reasoning(std::string_view text) override;
  void tool_call(int index, const std::string& id, const std::string& name, std::string_view delta) override;

  // The assistant message (ids replaced by "ID<index>").
  nlohmann::json message() const;
  // One array of delta objects per step, consecutive pieces of one kind
  // merged (as one SSE chunk per kind and step).
  const std::vector<nlohmann::json>& steps() const { return steps_; }
  // Strict-client violations seen (empty when none).
  const std::vector<std::string>& problems() const { return problems_; }
  const std::vector<std::string>& call_ids() const { return ids_; }

 private:
  void add(const std::string& kind, const nlohmann::json& delta, std::string_view text);

  std::string content_, reasoning_;
  bool content_seen_ = false;
  std::vector<std::string> ids_, names_, arguments_;
  std::vector<nlohmann::json> steps_;
  std::vector<std::string> problems_;
};

}  // namespace seatrt::parsers::test
