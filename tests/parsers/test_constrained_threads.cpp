// Constrained decoding from several threads at once: parsers created at the
// same moment share one vocabulary trie (built once under the cache's lock)
// and each computes exactly the masks a lone parser computes.
#include <catch2/catch.hpp>

#include <atomic>
#include <thread>

#include "constrained_vocab.hpp"
#include "gemma4_parser.hpp"
#include "harness.hpp"

using namespace seatrt::parsers::test;

namespace {

// The masks along a fixed output under response_format json_object.
std::vector<std::vector<uint32_t>> masks_along(const TestVocab& vocab, const std::vector<std::string>& pieces) {
  seatrt_parser_request r{};
  r.struct_size = sizeof(r);
  r.request_id = "threads";
  r.tools_json = "";
  r.tool_choice_json = "";
  r.response_format_json = R"({"type": "json_object"})";
  r.chat_template_kwargs_json = "{}";
  r.prompt_tail = "";
  r.vocab = vocab.get();
  seatrt::parsers::gemma4::Gemma4Parser parser("", r);
  Recorder rec;
  const size_t words = (static_cast<size_t>(vocab.size()) + 31) / 32;
  std::vector<std::vector<uint32_t>> out;
  for (const std::string& piece : pieces) {
    std::vector<uint32_t> mask(words);
    if (!parser.allowed_tokens(mask.data(), words)) break;
    out.push_back(mask);
    const int32_t id = vocab.id(piece);
    parser.feed(&id, 1, piece, rec);
  }
  return out;
}

}  // namespace

TEST_CASE("constrained parsers in parallel threads compute the same masks", "[parsers][constrained][concurrency]") {
  const TestVocab vocab = constrained_vocab();
  const std::vector<std::string> pieces = {"{\"", "id", "\"", ":", "12", ",", "\"", "ab", "\"", ":", "[",
                                           "true", ",", "null", "]", "}"};
  std::atomic<int> mismatches{0};
  std::vector<std::vector<std::vector<uint32_t>>> results(6);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        auto masks = masks_along(vocab, pieces);
        if (round == 0) {
          results[t] = std::move(masks);
        } else if (masks != results[t]) {
          ++mismatches;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  const auto alone = masks_along(vocab, pieces);
  CHECK(alone.size() == pieces.size());
  CHECK(mismatches.load() == 0);
  for (const auto& r : results) CHECK(r == alone);
}
