#include "matcher.hpp"

#include <algorithm>

#include "markers.hpp"

namespace seatrt::parsers::gemma4 {
namespace {

// Phases of the frames (per node kind).
enum : uint8_t { kOpen = 0 };
enum : uint8_t { kStrOpen = 0, kStrBody, kStrClose, kStrEscape };
enum : uint8_t { kNumStart = 0, kNumSign, kNumZero, kNumInt, kNumDot, kNumFrac, kNumE, kNumESign, kNumExp };
enum : uint8_t { kObjOpen = 0, kObjFirst, kObjKeyStart, kObjKey, kObjKeyEnd, kObjValue, kObjAfter };
enum : uint8_t { kArrOpen = 0, kArrFirst, kArrNext, kArrAfter };
enum : uint8_t {
  kRootStart = 0,
  kRootThoughtBody,
  kRootThoughtClose,
  kRootCallOpen,
  kRootCallPrefix,
  kRootName,
  kRootCallClose,
  kRootAfterCall,
  kRootValue,
  kRootDone,
  kRootThoughtOpen
};

constexpr uint32_t kMaxExponentDigits = 2;  // keeps numbers finite as doubles

bool is_digit(int b) { return b >= '0' && b <= '9'; }
bool is_key_char(int b) {
  return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || is_digit(b) || b == '_';
}

// One byte of a literal: -1 no match, 0 matched (more to come), 1 complete.
int literal_step(std::string_view bytes, const std::vector<bool>* special_flags, uint32_t& pos, int b,
                 bool special) {
  if (pos >= bytes.size() || b != static_cast<uint8_t>(bytes[pos])) return -1;
  const bool want_special = special_flags ? (*special_flags)[pos] : false;
  if (want_special != special) return -1;
  ++pos;
  return pos == bytes.size() ? 1 : 0;
}

int control(std::string_view marker, uint32_t& pos, int b, bool special) {
  if (pos >= marker.size() || b != static_cast<uint8_t>(marker[pos]) || !special) return -1;
  ++pos;
  return pos == marker.size() ? 1 : 0;
}

uint64_t all_bits(size_t n) { return n >= 64 ? ~0ull : ((1ull << n) - 1); }

}  // namespace

Matcher::Matcher(const Grammar& grammar) : g_(&grammar) {
  push(grammar.root);
  Frame& root = frames_[0];
  if (g_->nodes[static_cast<size_t>(grammar.root)].start_in_thought) root.phase = kRootThoughtBody;
}

void Matcher::assign(const Matcher& other) {
  g_ = other.g_;
  depth_ = other.depth_;
  std::copy_n(other.frames_.begin(), depth_, frames_.begin());
}

bool Matcher::step(uint8_t byte, bool special) { return deliver(byte, special); }

bool Matcher::can_end() const {
  Matcher copy(*this);
  return copy.deliver(kEnd, false);
}

bool Matcher::plain_body(PlainBody* out) const {
  if (depth_ == 0) return false;
  const Frame& f = frames_[depth_ - 1];
  if (f.u8_need != 0 || f.aux != 0) return false;
  const NodeKind kind = node(f).kind;
  if (kind == NodeKind::kString && f.phase == kStrBody) {
    // Below minLength the trie walk decides: a plain token's characters
    // could use up the bytes the missing ones need.
    if (f.seen < node(f).min_chars) return false;
    out->json = g_->syntax == Syntax::kJson;
    out->remaining = node(f).max_bytes > f.count ? node(f).max_bytes - f.count : 0;
    return true;
  }
  if ((kind == NodeKind::kToolCalls || kind == NodeKind::kJsonRoot) && f.phase == kRootThoughtBody) {
    out->json = false;
    const uint32_t max = g_->limits.max_thought_bytes;
    out->remaining = max > f.count ? max - f.count : 0;
    return true;
  }
  return false;
}

bool Matcher::push(int node_id) {
  if (!fits(node_id)) return false;
  const Node& n = g_->nodes[static_cast<size_t>(node_id)];
  Frame f{};
  f.node = node_id;
  f.u8_lo = 0x80;
  f.u8_hi = 0xBF;
  if (n.kind == NodeKind::kLiterals) f.mask = all_bits(n.literals.size());
  frames_[depth_++] = f;
  return true;
}

bool Matcher::deliver(int byte, bool special, uint32_t chain) {
  while (depth_ > 0) {
    Frame& top = frames_[depth_ - 1];
    const NodeKind kind = node(top).kind;
    if (kind == NodeKind::kUnion || kind == NodeKind::kAnyValue) {
      // The first alternative that takes the byte is chosen for good.  Each
      // union passed recurses once (the compiler refuses loops and longer
      // runs of them; this bound keeps any other graph off the stack's end).
      if (byte == kEnd || chain >= kMaxUnionChain) return false;
      const std::vector<int> alternatives = node(top).children;
      for (int alt : alternatives) {
        Matcher trial(*this);
        --trial.depth_;
        if (!trial.push(alt)) continue;
        if (trial.deliver(byte, special, chain + 1)) {
          assign(trial);
          return true;
        }
      }
      return false;
    }
    switch (handle(top, byte, special)) {
      case Result::kTake:
      case Result::kAccept:
        return true;
      case Result::kReject:
        return false;
      case Result::kPushed:
        continue;
      case Result::kTakeDone:
        --depth_;
        if (depth_ > 0) child_done(frames_[depth_ - 1]);
        return true;
      case Result::kPass:
        --depth_;
        if (depth_ == 0) return false;
        child_done(frames_[depth_ - 1]);
        continue;
    }
  }
  return false;
}

void Matcher::child_done(Frame& parent) {
  switch (node(parent).kind) {
    case NodeKind::kObject:
      parent.seen |= 1ull << parent.aux;
      parent.phase = kObjAfter;
      return;
    case NodeKind::kAnyObject:
      ++parent.count;
      parent.phase = kObjAfter;
      return;
    case NodeKind::kArray:
    case NodeKind::kAnyArray:
      ++parent.count;
      parent.phase = kArrAfter;
      return;
    case NodeKind::kToolCalls:
      parent.phase = kRootCallClose;
      parent.pos = 0;
      return;
    case NodeKind::kJsonRoot:
      parent.phase = kRootDone;
      return;
    default:
      return;
  }
}

Matcher::Result Matcher::handle(Frame& f, int byte, bool special) {
  switch (node(f).kind) {
    case NodeKind::kLiterals:
      return literals(f, byte, special);
    case NodeKind::kString:
      return string_body(f, byte, special);
    case NodeKind::kInteger:
      return number(f, byte, true);
    case NodeKind::kNumber:
      return number(f, byte, false);
    case NodeKind::kObject:
      return object(f, byte, special);
    case NodeKind::kAnyObject:
      return any_object(f, byte, special);
    case NodeKind::kArray:
    case NodeKind::kAnyArray:
      return array(f, byte, special);
    case NodeKind::kToolCalls:
      return tool_calls(f, byte, special);
    case NodeKind::kJsonRoot:
      return json_root(f, byte, special);
    case NodeKind::kUnion:
    case NodeKind::kAnyValue:
      break;
  }
  return Result::kReject;
}

Matcher::Result Matcher::literals(Frame& f, int byte, bool special) {
  const auto& lits = node(f).literals;
  uint64_t next = 0;
  bool complete = false, extends = false;
  for (size_t i = 0; i < lits.size(); ++i) {
    if (!(f.mask >> i & 1)) continue;
    const Literal& lit = lits[i];
    if (lit.bytes.size() == f.pos) complete = true;
    if (byte == kEnd || f.pos >= lit.bytes.size()) continue;
    if (byte == static_cast<uint8_t>(lit.bytes[f.pos]) && lit.special[f.pos] == special) {
      next |= 1ull << i;
      if (lit.bytes.size() > f.pos + 1) extends = true;
    }
  }
  if (next) {
    f.mask = next;
    ++f.pos;
    return extends ? Result::kTake : Result::kTakeDone;
  }
  return complete ? Result::kPass : Result::kReject;
}

bool Matcher::body_byte(Frame& f, uint8_t b, uint32_t max_bytes) {
  if (f.u8_need == 0 && f.count >= max_bytes) return false;
  if (f.u8_need > 0) {
    if (b < f.u8_lo || b > f.u8_hi) return false;
    --f.u8_need;
    f.u8_lo = 0x80;
    f.u8_hi = 0xBF;
  } else if (b >= 0x80) {
    if (b >= 0xC2 && b <= 0xDF) {
      f.u8_need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      f.u8_need = 2;
      if (b == 0xE0) f.u8_lo = 0xA0;
      if (b == 0xED) f.u8_hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      f.u8_need = 3;
      if (b == 0xF0) f.u8_lo = 0x90;
      if (b == 0xF4) f.u8_hi = 0x8F;
    } else {
      return false;
    }
  }
  // The body must never spell a control token as plain text.
  f.aux = g_->ac_next[f.aux][b];
  if (g_->ac_hit[f.aux]) return false;
  ++f.count;
  return true;
}

Matcher::Result Matcher::string_body(Frame& f, int byte, bool special) {
  if (byte == kEnd) return Result::kReject;
  const bool native = g_->syntax == Syntax::kNative;
  const auto b = static_cast<uint8_t>(byte);
  switch (f.phase) {
    case kStrOpen:
      if (native) {
        const int r = control(kStringDelim, f.pos, byte, special);
        if (r < 0) return Result::kReject;
        if (r == 1) f.phase = kStrBody;
        return Result::kTake;
      }
      if (b != '"' || special) return Result::kReject;
      f.phase = kStrBody;
      return Result::kTake;
    case kStrBody:
      if (native && special) {
        if (f.u8_need > 0 || f.seen < node(f).min_chars) return Result::kReject;
        f.pos = 0;
        if (control(kStringDelim, f.pos, byte, special) < 0) return Result::kReject;
        f.phase = kStrClose;
        return Result::kTake;
      }
      if (special) return Result::kReject;
      if (!native) {
        if (b == '"') return f.u8_need == 0 && f.seen >= node(f).min_chars ? Result::kTakeDone : Result::kReject;
        if (b < 0x20) return Result::kReject;
        if (b == '\\') {
          // An escape is two bytes for one character.
          if (f.u8_need > 0 || f.count + 2 > node(f).max_bytes || !min_chars_fit(f, f.count + 2, f.seen + 1, 0))
            return Result::kReject;
          f.count += 1;
          f.phase = kStrEscape;
          return Result::kTake;
        }
      }
      if (node(f).min_chars == 0) {  // the common case: no character count to keep (mask walks step here)
        return body_byte(f, b, node(f).max_bytes) ? Result::kTake : Result::kReject;
      }
      {
        Frame next = f;
        const bool starts = f.u8_need == 0;  // the first byte of a character
        if (!body_byte(next, b, node(f).max_bytes)) return Result::kReject;
        if (starts) ++next.seen;
        if (!min_chars_fit(next, next.count, next.seen, next.u8_need)) return Result::kReject;
        f = next;
        return Result::kTake;
      }
    case kStrClose: {
      const int r = control(kStringDelim, f.pos, byte, special);
      if (r < 0) return Result::kReject;
      return r == 1 ? Result::kTakeDone : Result::kTake;
    }
    case kStrEscape:
      // \uXXXX is not offered: raw UTF-8 says the same without lone surrogates.
      if (special || std::string_view("\"\\/bfnrt").find(static_cast<char>(b)) == std::string_view::npos) {
        return Result::kReject;
      }
      f.count += 1;
      f.seen += 1;
      f.aux = 0;
      f.phase = kStrBody;
      return Result::kTake;
  }
  return Result::kReject;
}

bool Matcher::min_chars_fit(const Frame& f, uint64_t bytes, uint64_t chars, uint32_t pending) const {
  // minLength: after this byte, the bytes left must still hold the rest of
  // the current character and one byte per character still missing.
  const Node& n = node(f);
  if (n.min_chars == 0) return true;
  const uint64_t missing = chars >= n.min_chars ? 0 : n.min_chars - chars;
  return bytes + pending + missing <= n.max_bytes;
}

Matcher::Result Matcher::number(Frame& f, int byte, bool integer) {
  // Integers stay within 64 bits (18 digits), so every JSON reader keeps
  // them integers.
  const uint32_t max_digits = integer ? std::min(g_->limits.max_number_digits, 18u) : g_->limits.max_number_digits;
  const bool digit = is_digit(byte);
  // A bounded number (numeric_bounds.hpp) keeps its digits in the frame --
  // u8_need: negative; mask: integer part; aux: its digits; seen: fraction
  // -- and takes a digit, a sign or a point only while some completion lies
  // within the bounds; it is written without an exponent.
  const NumberBounds& bounds = node(f).bounds;
  const bool bounded = bounds.any();
  const auto prefix = [&] {
    NumberPrefix p;
    p.negative = f.u8_need != 0;
    p.int_part = f.mask;
    p.int_digits = f.aux;
    p.frac = f.seen;
    p.frac_digits = f.count - f.aux;
    p.dot = f.phase == kNumDot || f.phase == kNumFrac;
    return p;
  };
  const auto take_digit = [&](uint8_t next_phase) {
    if (f.count >= max_digits) return Result::kReject;
    if (bounded) {
      NumberPrefix p = prefix();
      const auto d = static_cast<uint64_t>(byte - '0');
      if (next_phase == kNumFrac) {
        p.frac = p.frac * 10 + d;
        ++p.frac_digits;
        p.dot = true;
      } else {
        p.int_part = p.int_part * 10 + d;
        ++p.int_digits;
      }
      if (!bounds_reachable(bounds, p, max_digits, integer)) return Result::kReject;
      f.mask = p.int_part;
      f.aux = p.int_digits;
      f.seen = p.frac;
    }
    ++f.count;
    f.phase = next_phase;
    return Result::kTake;
  };
  // The number is complete: the byte belongs to what follows.
  const auto done = [&] { return !bounded || bounds_contain(bounds, prefix()) ? Result::kPass : Result::kReject; };
  const auto exponent = [&] {
    if (bounded) return Result::kReject;
    f.phase = kNumE;
    return Result::kTake;
  };
  switch (f.phase) {
    case kNumStart:
      if (byte == '-') {
        if (bounded && !bounds_reachable(bounds, NumberPrefix{true, 0, 0, 0, 0, false}, max_digits, integer))
          return Result::kReject;
        f.u8_need = 1;
        f.phase = kNumSign;
        return Result::kTake;
      }
      [[fallthrough]];
    case kNumSign:
      if (byte == '0') return take_digit(kNumZero);
      if (digit) return take_digit(kNumInt);
      return Result::kReject;
    case kNumZero:
    case kNumInt:
      if (f.phase == kNumInt && digit) {
        return f.count < max_digits ? take_digit(kNumInt) : done();
      }
      if (!integer && byte == '.' && f.count < max_digits) {  // a fraction digit must fit
        if (bounded) {
          NumberPrefix p = prefix();
          p.dot = true;
          if (!bounds_reachable(bounds, p, max_digits, integer)) return Result::kReject;
        }
        f.phase = kNumDot;
        return Result::kTake;
      }
      if (!integer && (byte == 'e' || byte == 'E')) return exponent();
      return done();
    case kNumDot:
      return digit ? take_digit(kNumFrac) : Result::kReject;
    case kNumFrac:
      if (digit && f.count < max_digits) return take_digit(kNumFrac);
      if (byte == 'e' || byte == 'E') return exponent();
      return done();
    case kNumE:
      if (byte == '+' || byte == '-') {
        f.phase = kNumESign;
        return Result::kTake;
      }
      [[fallthrough]];
    case kNumESign:
      if (!digit) return Result::kReject;
      f.aux = 1;
      f.phase = kNumExp;
      return Result::kTake;
    case kNumExp:
      if (digit && f.aux < kMaxExponentDigits) {
        ++f.aux;
        return Result::kTake;
      }
      return Result::kPass;
  }
  return Result::kReject;
}

Matcher::Result Matcher::object(Frame& f, int byte, bool special) {
  const Node& n = node(f);
  if (f.phase == kObjValue && byte != kEnd) {
    f.phase = kObjAfter;  // once the value is done (child_done)
    return push(n.properties[f.aux].node) ? Result::kPushed : Result::kReject;
  }
  if (special || byte == kEnd) return Result::kReject;
  const bool native = g_->syntax == Syntax::kNative;
  uint64_t required = 0, fitting = 0;
  for (size_t i = 0; i < n.properties.size(); ++i) {
    if (n.properties[i].required) required |= 1ull << i;
    if (fits(n.properties[i].node)) fitting |= 1ull << i;
  }
  const uint64_t unseen = all_bits(n.properties.size()) & ~f.seen;
  // The keys that may still be written: those whose value can end within
  // the frames left (a required one always can: the object's min_frames
  // counted it before it was pushed).
  const uint64_t open = unseen & fitting;
  const auto start_key = [&]() {
    if (open == 0) return Result::kReject;
    if (!native) {
      if (byte != '"') return Result::kReject;
      f.mask = open;
      f.pos = 0;
      f.phase = kObjKey;
      return Result::kTake;
    }
    f.mask = open;
    f.pos = 0;
    f.phase = kObjKey;
    return object(f, byte, special);
  };
  switch (f.phase) {
    case kObjOpen:
      if (byte != '{') return Result::kReject;
      f.phase = kObjFirst;
      return Result::kTake;
    case kObjFirst:
      if (byte == '}') return required == 0 ? Result::kTakeDone : Result::kReject;
      return start_key();
    case kObjKeyStart:
      return start_key();
    case kObjKey: {
      const char terminator = native ? ':' : '"';
      uint64_t next = 0;
      for (size_t i = 0; i < n.properties.size(); ++i) {
        if (!(f.mask >> i & 1)) continue;
        const std::string& name = n.properties[i].name;
        if (byte == terminator && name.size() == f.pos) {
          f.aux = static_cast<uint32_t>(i);
          f.phase = native ? kObjValue : kObjKeyEnd;
          return Result::kTake;
        }
        if (f.pos < name.size() && static_cast<uint8_t>(name[f.pos]) == byte) next |= 1ull << i;
      }
      if (!next) return Result::kReject;
      f.mask = next;
      ++f.pos;
      return Result::kTake;
    }
    case kObjKeyEnd:
      if (byte != ':') return Result::kReject;
      f.phase = kObjValue;
      return Result::kTake;
    case kObjValue:
      f.phase = kObjAfter;  // until the child finishes (child_done sets it again)
      return push(n.properties[f.aux].node) ? Result::kPushed : Result::kReject;
    case kObjAfter:
      if (byte == ',' && open != 0) {
        f.phase = kObjKeyStart;
        return Result::kTake;
      }
      if (byte == '}' && (required & ~f.seen) == 0) return Result::kTakeDone;
      return Result::kReject;
  }
  return Result::kReject;
}

Matcher::Result Matcher::any_object(Frame& f, int byte, bool special) {
  if (f.phase == kObjValue && byte != kEnd) {
    f.phase = kObjAfter;
    return push(node(f).children[0]) ? Result::kPushed : Result::kReject;
  }
  if (special || byte == kEnd) return Result::kReject;
  const bool native = g_->syntax == Syntax::kNative;
  switch (f.phase) {
    case kObjOpen:
      if (byte != '{') return Result::kReject;
      f.phase = kObjFirst;
      return Result::kTake;
    case kObjFirst:
      if (byte == '}') return Result::kTakeDone;
      if (!fits(node(f).children[0])) return Result::kReject;  // no room for a value
      [[fallthrough]];
    case kObjKeyStart:
      f.pos = 0;
      f.phase = kObjKey;
      if (!native) return byte == '"' ? Result::kTake : Result::kReject;
      [[fallthrough]];
    case kObjKey:
      if (is_key_char(byte) && f.pos < g_->limits.max_key_bytes) {
        ++f.pos;
        return Result::kTake;
      }
      if (f.pos == 0) return Result::kReject;
      if (native && byte == ':') {
        f.phase = kObjValue;
        return Result::kTake;
      }
      if (!native && byte == '"') {
        f.phase = kObjKeyEnd;
        return Result::kTake;
      }
      return Result::kReject;
    case kObjKeyEnd:
      if (byte != ':') return Result::kReject;
      f.phase = kObjValue;
      return Result::kTake;
    case kObjValue:
      f.phase = kObjAfter;
      return push(node(f).children[0]) ? Result::kPushed : Result::kReject;
    case kObjAfter:
      // A free object's key count: its maxProperties (max_items), within the
      // seat's max_free_keys.
      if (byte == ',' && f.count < (node(f).max_items ? node(f).max_items : g_->limits.max_free_keys) &&
          fits(node(f).children[0])) {
        f.phase = kObjKeyStart;
        return Result::kTake;
      }
      return byte == '}' ? Result::kTakeDone : Result::kReject;
  }
  return Result::kReject;
}

Matcher::Result Matcher::array(Frame& f, int byte, bool special) {
  if (special || byte == kEnd) {
    // An item that starts with a special token (a native string's <|"|>):
    // the same checks as a plain first byte below (maxItems 0 once let a
    // string into an array that must stay empty).
    if (f.phase == kArrFirst || f.phase == kArrNext) {
      if (byte == kEnd || (f.phase == kArrFirst && node(f).max_items == 0)) return Result::kReject;
      f.phase = kArrAfter;
      return push(node(f).items) ? Result::kPushed : Result::kReject;
    }
    return Result::kReject;
  }
  const Node& n = node(f);
  switch (f.phase) {
    case kArrOpen:
      if (byte != '[') return Result::kReject;
      f.phase = kArrFirst;
      return Result::kTake;
    case kArrFirst:
      if (byte == ']') return n.min_items == 0 ? Result::kTakeDone : Result::kReject;
      if (n.max_items == 0) return Result::kReject;
      [[fallthrough]];
    case kArrNext:
      f.phase = kArrAfter;
      return push(n.items) ? Result::kPushed : Result::kReject;
    case kArrAfter:
      if (byte == ',' && f.count < n.max_items && fits(n.items)) {
        f.phase = kArrNext;
        return Result::kTake;
      }
      if (byte == ']' && f.count >= n.min_items) return Result::kTakeDone;
      return Result::kReject;
  }
  return Result::kReject;
}

Matcher::Result Matcher::thought(Frame& f, int byte, bool special, uint8_t after_phase) {
  if (byte == kEnd) return Result::kReject;
  if (f.phase == kRootThoughtBody) {
    if (special) {
      if (f.u8_need > 0) return Result::kReject;
      f.pos = 0;
      if (control(kChannelClose, f.pos, byte, special) < 0) return Result::kReject;
      f.phase = kRootThoughtClose;
      return Result::kTake;
    }
    return body_byte(f, static_cast<uint8_t>(byte), g_->limits.max_thought_bytes) ? Result::kTake
                                                                                   : Result::kReject;
  }
  const int r = control(kChannelClose, f.pos, byte, special);
  if (r < 0) return Result::kReject;
  if (r == 1) {
    f.phase = after_phase;
    f.pos = 0;
    f.count = 0;
    f.aux = 0;
  }
  return Result::kTake;
}

Matcher::Result Matcher::thought_open(Frame& f, int byte, bool special) {
  const int r = control(kChannelOpen, f.pos, byte, special);
  if (r < 0) return Result::kReject;
  if (r == 1) {
    f.phase = kRootThoughtBody;
    f.pos = 0;
    f.count = 0;
    f.aux = 0;
  }
  return Result::kTake;
}

Matcher::Result Matcher::tool_calls(Frame& f, int byte, bool special) {
  const Node& n = node(f);
  switch (f.phase) {
    case kRootStart:
      // Either <|channel> (an optional thought) or <|tool_call>: they part
      // at the third byte.
      if (f.pos < 2) {
        if (control(kToolCallOpen, f.pos, byte, special) < 0) return Result::kReject;
        return Result::kTake;
      }
      if (n.allow_thought && byte == static_cast<uint8_t>(kChannelOpen[2]) && special) {
        f.phase = kRootThoughtOpen;
        ++f.pos;
        return Result::kTake;
      }
      f.phase = kRootCallOpen;
      [[fallthrough]];
    case kRootCallOpen: {
      const int r = control(kToolCallOpen, f.pos, byte, special);
      if (r < 0) return Result::kReject;
      if (r == 1) {
        f.phase = kRootCallPrefix;
        f.pos = 0;
      }
      return Result::kTake;
    }
    case kRootThoughtBody:
      return thought(f, byte, special, kRootCallOpen);
    case kRootThoughtOpen:
      return thought_open(f, byte, special);
    case kRootThoughtClose:
      return thought(f, byte, special, kRootCallOpen);
    case kRootCallPrefix: {
      const int r = literal_step("call:", nullptr, f.pos, byte, special);
      if (r < 0) return Result::kReject;
      if (r == 1) {
        f.phase = kRootName;
        f.pos = 0;
        f.mask = all_bits(n.literals.size());
      }
      return Result::kTake;
    }
    case kRootName: {
      if (special || byte == kEnd) return Result::kReject;
      uint64_t next = 0;
      for (size_t i = 0; i < n.literals.size(); ++i) {
        if (!(f.mask >> i & 1)) continue;
        const std::string& name = n.literals[i].bytes;
        if (byte == '{' && name.size() == f.pos) {
          f.aux = static_cast<uint32_t>(i);
          return push(n.children[i]) ? Result::kPushed : Result::kReject;
        }
        if (f.pos < name.size() && static_cast<uint8_t>(name[f.pos]) == byte) next |= 1ull << i;
      }
      if (!next) return Result::kReject;
      f.mask = next;
      ++f.pos;
      return Result::kTake;
    }
    case kRootCallClose: {
      const int r = control(kToolCallClose, f.pos, byte, special);
      if (r < 0) return Result::kReject;
      if (r == 1) {
        f.phase = kRootAfterCall;
        f.pos = 0;
        ++f.count;
      }
      return Result::kTake;
    }
    case kRootAfterCall:
      if (byte == kEnd) return Result::kAccept;
      if (!n.many_calls || f.count >= g_->limits.max_calls) return Result::kReject;
      f.pos = 0;
      if (control(kToolCallOpen, f.pos, byte, special) < 0) return Result::kReject;
      f.phase = kRootCallOpen;
      return Result::kTake;
    default:
      return Result::kReject;
  }
}

Matcher::Result Matcher::json_root(Frame& f, int byte, bool special) {
  const Node& n = node(f);
  switch (f.phase) {
    case kRootStart:
      if (n.allow_thought && special) {
        f.phase = kRootThoughtOpen;
        f.pos = 0;
        return thought_open(f, byte, special);
      }
      [[fallthrough]];
    case kRootValue:
      if (byte == kEnd) return Result::kReject;
      f.phase = kRootDone;
      return push(n.children[0]) ? Result::kPushed : Result::kReject;
    case kRootThoughtBody:
    case kRootThoughtClose:
      return thought(f, byte, special, kRootValue);
    case kRootThoughtOpen:
      return thought_open(f, byte, special);
    case kRootDone:
      return byte == kEnd ? Result::kAccept : Result::kReject;
    default:
      return Result::kReject;
  }
}

}  // namespace seatrt::parsers::gemma4
