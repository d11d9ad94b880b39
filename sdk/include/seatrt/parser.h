/* seatrt plugin ABI: tool-call and reasoning parsers.
 *
 * A parser is a per-request state machine made by create() for one request
 * and destroyed with it: never one shared instance.  The host feeds it the
 * model's output as it is generated (token ids and their text, special
 * tokens always rendered as text) and it answers with events: content,
 * reasoning, tool-call deltas.  Before each sampling step the host may ask
 * it which tokens are allowed next (constrained decoding for a forced
 * tool_choice or a response_format).
 *
 * Chaining: when a seat has both a reasoning and a tool parser, the host
 * feeds the reasoning parser first; the content it emits is fed, as text, to
 * the tool parser (with the same token ids as a hint).  Allowed-token masks
 * from both are ANDed.  One plugin may give the same table for both kinds;
 * the host then creates one instance that does both.
 *
 * Threading: one instance is used by one thread at a time; different
 * instances may be used concurrently, so a parser keeps no mutable global
 * state. */
#ifndef SEATRT_PARSER_H
#define SEATRT_PARSER_H

#include "seatrt/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tokenizer's vocabulary, host-provided, valid for the parser's life,
 * callable from any thread. */
typedef struct seatrt_vocab seatrt_vocab;
struct seatrt_vocab {
  uint32_t struct_size;
  int32_t size;
  const void* host_state; /* the host's; do not touch */
  /* The bytes token `id` stands for in the output (a byte-fallback token is
   * its one raw byte; a special token is its text).  Owned by the host. */
  void (*token_bytes)(const seatrt_vocab* vocab, int32_t id, const char** data, size_t* len);
  /* The id of the token whose whole text is `text`, or -1. */
  int32_t (*token_id)(const seatrt_vocab* vocab, const char* text);
  /* 1 if `id` is a special/added control token. */
  int32_t (*is_special)(const seatrt_vocab* vocab, int32_t id);
};

/* What the parser needs to know about its request.  Strings are JSON text
 * as the client sent it ("" when absent); all are owned by the host and
 * valid during create() only: a parser copies what it keeps. */
typedef struct seatrt_parser_request {
  uint32_t struct_size;
  uint32_t reserved0;
  const char* request_id;
  const char* tools_json;                /* the "tools" array */
  const char* tool_choice_json;          /* "\"auto\"", "\"none\"", "\"required\"" or an object */
  const char* response_format_json;
  /* Effective chat-template kwargs: the seat's defaults overridden by the
   * request's chat_template_kwargs (e.g. {"enable_thinking": false}). */
  const char* chat_template_kwargs_json;
  /* The end of the rendered prompt (e.g. to see whether it ends inside an
   * open reasoning channel).  May be shorter than the whole prompt. */
  const char* prompt_tail;
  size_t prompt_tail_len;
  const seatrt_vocab* vocab;
  /* 0 when the request asked for at most one tool call
   * (parallel_tool_calls: false), 1 otherwise; a parser that constrains
   * calls then stops after the first. */
  int32_t parallel_tool_calls;
  int32_t reserved1;
} seatrt_parser_request;

/* Where events go.  Host-provided; valid during the feed()/finish() call.
 * Text pointers are valid during the callback only. */
typedef struct seatrt_parser_events {
  uint32_t struct_size;
  uint32_t reserved0;
  void* user_data;
  void (*content)(void* user_data, const char* text, size_t len);
  void (*reasoning)(void* user_data, const char* text, size_t len);
  /* A piece of tool call `index` (0-based, in order of appearance).  id and
   * name are the full values, repeated on every delta of that call;
   * arguments_delta continues the call's JSON arguments (concatenating all
   * deltas of a call gives exactly its final arguments JSON). */
  void (*tool_call)(void* user_data, int32_t index, const char* id, const char* name,
                    const char* arguments_delta, size_t len);
} seatrt_parser_events;

typedef enum seatrt_finish_reason {
  SEATRT_FINISH_NONE = 0,
  SEATRT_FINISH_STOP = 1,       /* an end token or stop string */
  SEATRT_FINISH_LENGTH = 2,     /* max_tokens or context */
  SEATRT_FINISH_TOOL_CALLS = 3, /* the turn ended with tool calls */
  SEATRT_FINISH_ERROR = 4
} seatrt_finish_reason;

typedef struct seatrt_parser seatrt_parser; /* opaque, plugin-owned */

typedef struct seatrt_parser_api {
  uint32_t struct_size;
  uint32_t reserved0;

  /* Makes a parser for one request.  `options_toml` is the seat's options
   * table for this parser kind ("" when absent).  An impossible request
   * (e.g. a named tool_choice naming no declared tool) is INVALID_ARG with a
   * message fit for the client.  *out is owned by the caller (destroy). */
  seatrt_status* (*create)(const char* options_toml, const seatrt_parser_request* request,
                           seatrt_parser** out);

  /* Feeds newly generated output: `n_ids` token ids and the bytes they
   * decode to (possibly an incomplete UTF-8 sequence at the end, which the
   * parser must hold back).  Emits zero or more events. */
  seatrt_status* (*feed)(seatrt_parser* parser, const int32_t* ids, size_t n_ids,
                         const char* text, size_t text_len, const seatrt_parser_events* events);

  /* The output has ended for `reason`.  Flushes held-back text as events
   * and writes the finish reason the client should see (e.g. TOOL_CALLS
   * when calls were made, STOP or LENGTH otherwise). */
  seatrt_status* (*finish)(seatrt_parser* parser, int32_t reason,
                           const seatrt_parser_events* events, int32_t* client_reason);

  /* Constrained decoding hook, may be NULL.  Writes the allowed next tokens
   * as a bitmask (bit i of word i/32, `words` = ceil(vocab/32)) and sets
   * *constrained to 1; or sets *constrained to 0 and leaves mask unread
   * (any token allowed). */
  seatrt_status* (*allowed_tokens)(seatrt_parser* parser, uint32_t* mask, size_t words,
                                   int32_t* constrained);

  void (*destroy)(seatrt_parser* parser);
} seatrt_parser_api;

#ifdef __cplusplus
}
#endif

#endif /* SEATRT_PARSER_H */
