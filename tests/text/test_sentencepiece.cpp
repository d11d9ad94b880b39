// tokenizer.model through libsentencepiece against the Python sentencepiece
// oracle (tests/fixtures/tokenizer/sp_corpus.json, tools/text/make_sentencepiece_fixture.py).
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "seatrt/text/sentencepiece_tokenizer.hpp"

using namespace seatrt::text::testing;

TEST_CASE("sentencepiece: ids and decode equal the Python sentencepiece oracle") {
  const auto tok = seatrt::text::load_sentencepiece_tokenizer(fixture_path("tokenizer/sp_tiny.model"));
  const auto corpus = read_json_fixture("tokenizer/sp_corpus.json");
  CHECK(tok->vocab_size() == corpus["vocab_size"].get<int32_t>());
  CHECK(tok->bos_id() == corpus["bos_id"].get<int32_t>());
  CHECK(tok->eos_id() == corpus["eos_id"].get<int32_t>());
  REQUIRE(corpus["encode"].size() > 20);
  for (const auto& c : corpus["encode"]) {
    const std::string text = c["text"];
    INFO("text: " << text);
    const auto ids = c["ids"].get<std::vector<int32_t>>();
    CHECK(tok->encode(text, false) == ids);
    CHECK(tok->decode(ids, true) == c["decoded"].get<std::string>());
  }
  // Control tokens are kept as their text unless skipped.
  const std::vector<int32_t> with_bos{tok->bos_id()};
  CHECK(tok->decode(with_bos, false) == "<s>");
  CHECK(tok->decode(with_bos, true).empty());
}

TEST_CASE("sentencepiece: a corrupt model is a clear error") {
  CHECK_THROWS_AS(seatrt::text::make_sentencepiece_tokenizer("not a model proto"), seatrt::text::TokenizerError);
}
