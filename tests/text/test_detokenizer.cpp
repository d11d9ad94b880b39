// Streaming detokenization and stop strings: the concatenation of all deltas
// equals the full decode, for every prefix of every corpus string.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "seatrt/text/detokenizer.hpp"
#include "seatrt/text/hf_tokenizer.hpp"

using namespace seatrt::text;
using namespace seatrt::text::testing;

namespace {
const Tokenizer& test_tokenizer() {
  static const auto tok = load_hf_tokenizer(fixture_path("tokenizer/tokenizer.json"));
  return *tok;
}

bool is_complete_utf8(const std::string& s) {
  // Every delta must end on a code point boundary (the corpus is valid UTF-8).
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    if (i + n > s.size()) return false;
    i += n;
  }
  return true;
}

// Streams ids[0..n) and checks every intermediate state.
void check_stream(const Tokenizer& tok, const std::vector<int32_t>& ids, bool skip) {
  StreamingDetokenizer stream(tok, skip);
  std::string so_far;
  for (size_t n = 0; n < ids.size(); ++n) {
    const std::string delta = stream.push(ids[n]);
    CHECK(is_complete_utf8(delta));
    so_far += delta;
    // What was emitted is always a prefix of the decode of the ids so far.
    const std::vector<int32_t> prefix(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(n) + 1);
    const std::string full = tok.decode(prefix, skip);
    REQUIRE(full.compare(0, so_far.size(), so_far) == 0);
    // And flushing at this point gives exactly the decode of the prefix.
    StreamingDetokenizer copy = stream;
    CHECK(so_far + copy.finish() == full);
  }
  so_far += stream.finish();
  CHECK(so_far == tok.decode(ids, skip));
}
}  // namespace

TEST_CASE("detokenizer: incremental equals full decoding for every prefix of every corpus string") {
  const Tokenizer& tok = test_tokenizer();
  const auto corpus = read_json_fixture("tokenizer/corpus.json");
  for (const auto& c : corpus["encode"]) {
    INFO("text: " << c["text"].get<std::string>());
    const auto ids = c["ids_with_special"].get<std::vector<int32_t>>();
    check_stream(tok, ids, false);
    check_stream(tok, ids, true);
  }
  for (const auto& c : corpus["decode"]) {
    INFO("ids: " << c["ids"].dump());
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    check_stream(tok, ids, false);
    check_stream(tok, ids, true);
  }
}

TEST_CASE("detokenizer: byte-fallback runs are held until complete, specials skipped on request") {
  const Tokenizer& tok = test_tokenizer();
  StreamingDetokenizer stream(tok, true);
  // U+1F600 as four byte tokens with a skipped special in the middle.
  CHECK(stream.push(tok.token_id("<0xF0>")).empty());
  CHECK(stream.push(tok.token_id("<0x9F>")).empty());
  CHECK(stream.push(tok.token_id("<eos>")).empty());
  CHECK(stream.push(tok.token_id("<0x98>")).empty());
  CHECK(stream.push(tok.token_id("<0x80>")).empty());
  CHECK(stream.push(tok.token_id("a")) == "\xF0\x9F\x98\x80" "a");
  CHECK(stream.finish().empty());

  StreamingDetokenizer keep(tok, false);
  CHECK(keep.push(tok.token_id("<|turn>")) == "<|turn>");
  CHECK(keep.push(-5).empty());
}

TEST_CASE("stop strings: found across deltas, nothing emitted past the stop") {
  StopStringMatcher m({"STOP", "<end>"});
  std::string out;
  auto r = m.push("hello S");
  out += r.text;
  CHECK(r.stop_index == -1);
  CHECK(out == "hello ");  // "S" could start STOP: held
  r = m.push("T");
  out += r.text;
  CHECK(out == "hello ");
  r = m.push("OP and more");
  out += r.text;
  CHECK(r.stop_index == 0);
  CHECK(out == "hello ");
  CHECK(m.stopped());
  CHECK(m.push("x").text.empty());
  CHECK(m.finish().empty());

  StopStringMatcher n({"<end>"});
  std::string all = n.push("a <e").text;
  all += n.push("nx").text;  // diverged: released
  CHECK(all == "a <enx");
  all += n.push("tail <").text;
  CHECK(all == "a <enxtail ");
  all += n.finish();
  CHECK(all == "a <enxtail <");

  // The earliest stop in the text wins.
  StopStringMatcher o({"bc", "ab"});
  const auto r2 = o.push("xabc");
  CHECK(r2.text == "x");
  CHECK(r2.stop_index == 1);
}

TEST_CASE("stop strings: streamed token by token over the corpus equals a one-shot search") {
  const Tokenizer& tok = test_tokenizer();
  const auto corpus = read_json_fixture("tokenizer/corpus.json");
  for (const auto& c : corpus["encode"]) {
    const std::string text = c["decoded"];  // what the stream produces
    if (text.size() < 6) continue;
    // A 3-byte stop string from the middle, starting on a code point boundary.
    size_t at = text.size() / 2;
    while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
    const std::string stop = text.substr(at, 3);
    StreamingDetokenizer stream(tok, false);
    StopStringMatcher matcher({stop});
    std::string out;
    for (const int32_t id : c["ids"].get<std::vector<int32_t>>()) {
      out += matcher.push(stream.push(id)).text;
      if (matcher.stopped()) break;
    }
    if (!matcher.stopped()) out += matcher.push(stream.finish()).text + matcher.finish();
    INFO("text: " << text << " stop: " << stop);
    CHECK(matcher.stopped());
    CHECK(out == text.substr(0, text.find(stop)));
  }
}

TEST_CASE("detokenizer: a held byte run that spells whole characters is readable; a stop can be tested first") {
  const Tokenizer& tok = test_tokenizer();
  StreamingDetokenizer stream(tok, false);
  CHECK(stream.push(tok.token_id("<0xE2>")).empty());
  CHECK(stream.held_complete_text().empty());  // a character's first byte alone
  CHECK(stream.push(tok.token_id("<0x98>")).empty());
  CHECK(stream.held_complete_text().empty());
  CHECK(stream.push(tok.token_id("<0x95>")).empty());
  CHECK(stream.held_complete_text() == "\xE2\x98\x95");  // U+2615, still held
  CHECK(stream.push(tok.token_id("<0xFF>")).empty());  // never valid: the run now decodes to U+FFFD per byte
  CHECK(stream.held_complete_text().empty());
  CHECK(stream.finish() == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // the whole run, as the reference

  StopStringMatcher stops({"\xE2\x98\x95", "xyz"});
  CHECK_FALSE(stops.would_stop(""));
  CHECK(stops.push("ab x").text == "ab ");  // "x" held: it may start "xyz"
  CHECK(stops.would_stop("yz"));             // across the held text
  CHECK(stops.would_stop("\xE2\x98\x95"));
  CHECK_FALSE(stops.would_stop("y"));
  CHECK_FALSE(stops.stopped());              // would_stop changes nothing
  const auto r = stops.push("y!");
  CHECK(r.text == "xy!");
  CHECK(r.stop_index == -1);
}
