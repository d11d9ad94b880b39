// The control-token texts of Gemma-4's output (special tokens are always
// rendered as text by the host, so the parsers work on text).
#pragma once

#include <array>
#include <string_view>

namespace seatrt::parsers::gemma4 {

inline constexpr std::string_view kChannelOpen = "<|channel>";
inline constexpr std::string_view kChannelClose = "<channel|>";
inline constexpr std::string_view kToolCallOpen = "<|tool_call>";
inline constexpr std::string_view kToolCallClose = "<tool_call|>";
inline constexpr std::string_view kStringDelim = "<|\"|>";
inline constexpr std::string_view kThoughtLabel = "thought\n";

// Every control-token text the output parser recognises.  Those without a
// role above are dropped from content (turn, tool and media markers).
inline constexpr std::array<std::string_view, 22> kAllMarkers = {
    kChannelOpen,  kChannelClose,  kToolCallOpen, kToolCallClose, kStringDelim,
    "<|turn>",     "<turn|>",      "<|tool>",     "<tool|>",      "<|tool_response>",
    "<tool_response|>", "<|think|>", "<eos>",     "<bos>",        "<pad>",
    "<|image>",    "<|audio>",     "<|image|>",   "<|audio|>",    "<image|>",
    "<audio|>",    "<|video|>"};

// Stop tokens that may end a turn once constrained output is complete.
inline constexpr std::array<std::string_view, 3> kStopTokenTexts = {"<turn|>", "<eos>",
                                                                    "<|tool_response>"};

}  // namespace seatrt::parsers::gemma4
