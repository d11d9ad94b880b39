// Walks a Grammar one byte at a time: the state of a constrained output.
// A byte carries whether it comes from a special token: control-token texts
// (<|"|>, <|tool_call>, ...) must be written with their special tokens, and
// a special token's bytes are accepted only where a control token belongs.
// The state is a small stack of frames, cheap to copy (mask computation
// copies it once per vocabulary-trie node).
#pragma once

#include <array>
#include <cstdint>

#include "grammar.hpp"

namespace seatrt::parsers::gemma4 {

class Matcher {
 public:
  static constexpr uint32_t kMaxDepth = kMaxNesting;

  explicit Matcher(const Grammar& grammar);
  Matcher(const Matcher& other) { assign(other); }
  Matcher& operator=(const Matcher& other) {
    assign(other);
    return *this;
  }
  // Copies only the live part of the stack.
  void assign(const Matcher& other);

  // Consumes one byte; false (and the state is then unusable: step a copy)
  // when the byte cannot continue any valid output.
  bool step(uint8_t byte, bool special);
  // True when the output may end here (a stop token is allowed).
  bool can_end() const;

  // Inside a string or thought body at a character boundary with no
  // control-token text begun: every "plain" token (see PlainTokens) that
  // fits in `remaining` bytes is accepted, whatever its bytes.
  struct PlainBody {
    bool json;
    uint32_t remaining;
  };
  bool plain_body(PlainBody* out) const;

 private:
  struct Frame {
    int32_t node;
    uint8_t phase;
    uint8_t u8_need;  // UTF-8 continuation bytes still expected in a body
    uint8_t u8_lo;
    uint8_t u8_hi;
    uint32_t count;  // body bytes, array items, digits, calls, keys
    uint32_t pos;    // position in a literal or key
    uint32_t aux;    // chosen key or name; marker-automaton state in bodies
    uint64_t mask;   // literal or key candidates still possible
    uint64_t seen;   // properties already written; characters of a string; a bounded number's fraction
  };
  enum class Result { kTake, kTakeDone, kPass, kPushed, kReject, kAccept };
  static constexpr int kEnd = -1;

  // `chain`: the unions (and any-values) already passed on the way to this
  // byte's consumer; past kMaxUnionChain the byte is refused.
  bool deliver(int byte, bool special, uint32_t chain = 0);
  Result handle(Frame& f, int byte, bool special);
  Result literals(Frame& f, int byte, bool special);
  Result string_body(Frame& f, int byte, bool special);
  Result number(Frame& f, int byte, bool integer);
  Result object(Frame& f, int byte, bool special);
  Result any_object(Frame& f, int byte, bool special);
  Result array(Frame& f, int byte, bool special);
  Result tool_calls(Frame& f, int byte, bool special);
  Result json_root(Frame& f, int byte, bool special);
  Result thought(Frame& f, int byte, bool special, uint8_t after_phase);
  Result thought_open(Frame& f, int byte, bool special);
  bool body_byte(Frame& f, uint8_t byte, uint32_t max_bytes);
  // Whether a string at `bytes` bytes and `chars` characters, `pending`
  // continuation bytes owed, can still reach its node's minLength.
  bool min_chars_fit(const Frame& f, uint64_t bytes, uint64_t chars, uint32_t pending) const;
  bool push(int node);
  // Whether a value of `node` pushed now can end within kMaxDepth frames.
  bool fits(int node) const { return g_->nodes[static_cast<size_t>(node)].min_frames <= kMaxDepth - depth_; }
  void child_done(Frame& parent);
  const Node& node(const Frame& f) const { return g_->nodes[static_cast<size_t>(f.node)]; }

  const Grammar* g_;
  uint32_t depth_ = 0;
  std::array<Frame, kMaxDepth> frames_;
};

}  // namespace seatrt::parsers::gemma4
