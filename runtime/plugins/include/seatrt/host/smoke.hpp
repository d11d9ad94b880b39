// Tiny end-to-end exercises of a seat's plugins, for `seatrt check`: they
// prove the selected plugins are the ones that run (and give an operator a
// one-line sanity result), without a model.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "seatrt/host/kernel_dispatch.hpp"
#include "seatrt/parser.h"

namespace seatrt::host {

// Runs one rms_norm (x = [[1,2,3,4],[-1,0.5,0,2]], weight = [1,0.5,2,1],
// eps 1e-6, F32) through the dispatch table on `device` and returns
// "rms_norm via <provider> -> [..8 values..]".  Throws Error on failure.
std::string kernel_smoke(const KernelDispatch& dispatch, const std::string& options_toml,
                         int device);

// The fixed text parser_smoke() feeds.
extern const char* const kParserSmokeText;

// Feeds kParserSmokeText through a fresh parser made by `api` (one tool,
// get_weather(city), declared; tool_choice "auto") and returns the events
// as one line: content="..." reasoning="..." tool_call[0]=name(args)
// finish=...  Throws Error on failure.
std::string parser_smoke(const seatrt_parser_api* api, const std::string& options_toml,
                         const nlohmann::json& chat_template_kwargs);

}  // namespace seatrt::host
