// Reading a whole file the operator named (seat file, config.json, index,
// tokenizer, template).  Only a regular file is read: a FIFO would block the
// process forever and a device may never end, so anything else is refused
// by name before it is opened.  Header-only: the text library uses it
// without linking the host's common library.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace seatrt::host {

// Fills `text` and returns "" on success; otherwise returns why `path`
// cannot be read ("does not exist", "is not a regular file", ...), for the
// caller to put into its own error.
inline std::string read_regular_file(const std::filesystem::path& path, std::string& text) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || status.type() == std::filesystem::file_type::not_found)
    return ec && status.type() != std::filesystem::file_type::not_found ? "cannot be read: " + ec.message()
                                                                         : "does not exist";
  if (status.type() == std::filesystem::file_type::directory) return "is a directory, not a file";
  if (status.type() != std::filesystem::file_type::regular) return "is not a regular file";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot be opened";
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return "cannot be read";
  text = buffer.str();
  return "";
}

}  // namespace seatrt::host
