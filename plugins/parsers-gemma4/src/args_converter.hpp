// Turns a call's native arguments (`{key:value,...}` with strings between
// <|"|> delimiters) into JSON text, incrementally: JSON is produced as soon as
// it is certain, so the pieces concatenate to exactly the final arguments.
// Output uses Python json.dumps's separators (", " and ": ").  Values that
// are not yet certain are withheld: a bare value until its terminator (a
// "2" may become "25"), a key until its ':', a ',' until the next element.
// The reader is tolerant: junk between elements is skipped, a key without a
// value is dropped, a missing value becomes null, so the JSON is always
// well-formed once the call is closed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace seatrt::parsers::gemma4 {

class ArgsConverter {
 public:
  // Reads plain text (valid UTF-8, no control-token text).  Returns how many
  // bytes were used: fewer than text.size() only once the top-level object
  // has closed (the rest belongs to whatever follows the arguments).
  size_t text(std::string_view text);
  // The string delimiter <|"|>.
  void delimiter();
  // Ends the arguments early (cut off, or the call closed with brackets still
  // open): closes every open string, array and object.
  void close();
  // True once the top-level object has closed.
  bool done() const { return done_; }
  // JSON produced since the last call.
  std::string take();

 private:
  enum class Phase { kStart, kObjKey, kObjColon, kObjValue, kObjAfter, kArrValue, kArrAfter };
  enum class Mode { kStructure, kKey, kQuotedKey, kString, kBare };
  struct Frame {
    bool is_object;
    Phase phase;
    bool pending_comma;
  };

  void structure_char(char c);
  void begin_element();
  void open(bool is_object);
  void close_top();
  void end_bare();
  void emit_key();
  void value_done();
  Phase& phase();

  std::vector<Frame> frames_;
  Mode mode_ = Mode::kStructure;
  std::string buffer_;  // key or bare value being read
  std::string out_;
  bool started_ = false;
  bool done_ = false;
};

}  // namespace seatrt::parsers::gemma4
