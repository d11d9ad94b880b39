"""The seat server driven by the official openai client: chat, completions,
streaming with usage, n=2, stop strings, seeds, logprobs, tools with every
tool_choice, and the error statuses.  Run: python3 test_openai_api.py
(SEATRT_BUILD_DIR names the build tree)."""

import json
import math
import unittest

import openai

from seat_harness import API_KEY, RAW_SCRIPTS, SCRIPTS, SharedSeatTest, _tok, decode, ids

MODEL = "scripted"
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                       "required": ["city"]},
    },
}


class OpenAIApiTest(SharedSeatTest):
    def chat(self, content, **kw):
        return self.client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": content}], **kw)

    # ---------------------------------------------------------------- basics
    def test_models_lists_names_and_aliases_with_max_model_len(self):
        models = self.client.models.list().data
        self.assertEqual([m.id for m in models], ["scripted", "scripted-alias"])
        self.assertEqual(models[0].model_extra["max_model_len"], 512)

    def test_plain_prose_without_channel_leak_or_reasoning(self):
        r = self.chat("Please HELLO_PROSE now", max_tokens=64, temperature=0)
        msg = r.choices[0].message
        self.assertEqual(msg.content, "Hello there, friend. The weather is fine today.")
        self.assertEqual(r.choices[0].finish_reason, "stop")
        self.assertNotIn("reasoning_content", msg.model_extra or {})
        self.assertNotIn("reasoning", msg.model_extra or {})
        self.assertEqual(r.usage.completion_tokens, len(ids(msg.content)) + 1)  # and the end token, as vLLM counts
        self.assertGreater(r.usage.prompt_tokens, 0)

    def test_models_retrieve_and_version(self):
        self.assertEqual(self.client.models.retrieve("scripted-alias").id, "scripted-alias")
        self.assertEqual(self.client.models.retrieve("scripted").model_extra["max_model_len"], 512)
        with self.assertRaises(openai.NotFoundError):
            self.client.models.retrieve("scripted/../scripted")  # sent as one percent-encoded segment
        self.assertEqual(self.seat.get("/v1/models/scripted", key=None)[0], 401)
        # /version (vLLM's): the project's version, no key needed.
        import os
        import re
        with open(os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt")) as f:
            version = re.search(r"project\(seatrt VERSION ([0-9.]+)", f.read()).group(1)
        status, text = self.seat.get("/version", key=None)
        self.assertEqual((status, json.loads(text)), (200, {"version": version}))

    def test_seatrt_bench_reports_the_engine_steps_it_drove(self):
        import os
        import subprocess
        import tempfile
        from seat_harness import build_dir
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "bench.json")
            run = subprocess.run([os.path.join(build_dir(), "bin", "seatrt"), "bench", self.seat.base_url,
                                  "--concurrency", "2", "--gen-tokens", "8", "--prompt-tokens", "16",
                                  "--requests-per-stream", "2", "--json", out],
                                 env=dict(os.environ, SEATRT_API_KEY=API_KEY), capture_output=True, text=True,
                                 timeout=120)
            self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
            with open(out) as f:
                level = json.load(f)["decode"][0]
        self.assertEqual((level["requests"], level["failed"], level["completion_tokens"]), (4, 0, 32))
        # Two streams of 8 tokens at a time: at least 16 steps (8 per request pair), at most 2 tokens each.
        self.assertGreaterEqual(level["engine_steps"], 16)
        self.assertLessEqual(level["engine_tokens_per_step"], 2.0)
        self.assertGreater(level["engine_model_us_per_step"], 0)
        self.assertGreaterEqual(level["engine_host_us_per_step"], 0)
        self.assertIn("engine:", run.stdout)

    def test_alias_answers_under_its_own_name(self):
        r = self.client.chat.completions.create(model="scripted-alias", max_tokens=4,
                                                messages=[{"role": "user", "content": "hi"}])
        self.assertEqual(r.model, "scripted-alias")

    def test_reasoning_is_split_from_content(self):
        r = self.chat("Please THINK_THEN_ANSWER now", max_tokens=64, temperature=0,
                      extra_body={"chat_template_kwargs": {"enable_thinking": True}})
        msg = r.choices[0].message
        self.assertEqual(msg.content, "The answer is 4.")
        # Under vLLM's current field name and its earlier one.
        self.assertEqual(msg.model_extra.get("reasoning"), "Let me think.")
        self.assertEqual(msg.model_extra.get("reasoning_content"), "Let me think.")
        stream = self.chat("Please THINK_THEN_ANSWER now", max_tokens=64, temperature=0, stream=True,
                           extra_body={"chat_template_kwargs": {"enable_thinking": True}})
        deltas = [c.choices[0].delta.model_extra or {} for c in stream if c.choices]
        self.assertEqual("".join(d.get("reasoning") or "" for d in deltas), "Let me think.")
        self.assertEqual("".join(d.get("reasoning_content") or "" for d in deltas), "Let me think.")

    def test_stop_strings_end_a_thought_too(self):
        # As vLLM matches stop strings on the whole output: one inside the
        # thought stops there (the cut-off thought is also the content, both
        # ending before the stop); one in the answer cuts only the answer.
        kw = {"extra_body": {"chat_template_kwargs": {"enable_thinking": True}}}
        for stop, reasoning, content in ((["think"], "Let me ", "Let me "),
                                         (["answer"], "Let me think.", "The ")):
            r = self.chat("Please THINK_THEN_ANSWER now", max_tokens=64, temperature=0, stop=stop, **kw)
            c = r.choices[0]
            self.assertEqual((c.finish_reason, c.stop_reason), ("stop", stop[0]))
            self.assertEqual((c.message.model_extra.get("reasoning_content"), c.message.content), (reasoning, content))
            deltas = [ch.choices[0].delta for ch in
                      self.chat("Please THINK_THEN_ANSWER now", max_tokens=64, temperature=0, stop=stop, stream=True,
                                **kw) if ch.choices]
            self.assertEqual("".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas), reasoning)
            self.assertEqual("".join(d.content or "" for d in deltas), content)

    def test_completions_endpoint(self):
        r = self.client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=8, temperature=0)
        self.assertEqual(r.choices[0].finish_reason, "length")
        self.assertEqual(r.usage.completion_tokens, 8)
        self.assertEqual(r.usage.prompt_tokens, len(_tok.encode("Once upon a time", add_special_tokens=True).ids))
        self.assertTrue(r.choices[0].text)

    def test_completions_with_several_prompts_number_choices_per_prompt(self):
        prompts = ["Once upon a time", "The quick brown fox"]
        alone = [self.client.completions.create(model=MODEL, prompt=p, max_tokens=3, temperature=0).choices[0].text
                 for p in prompts]
        r = self.client.completions.create(model=MODEL, prompt=prompts, max_tokens=3, temperature=0, n=2, echo=True)
        self.assertEqual([c.index for c in r.choices], [0, 1, 2, 3])
        self.assertEqual([c.text for c in r.choices],
                         [prompts[0] + alone[0]] * 2 + [prompts[1] + alone[1]] * 2)
        counted = sum(len(_tok.encode(p, add_special_tokens=True).ids) for p in prompts)
        self.assertEqual(r.usage.prompt_tokens, counted)  # each prompt once, whatever n
        self.assertEqual(r.usage.completion_tokens, 12)
        # Token-id prompts, streamed: every choice's chunks carry its index.
        id_prompts = [ids("Once upon a time"), ids("red green blue")]
        texts = {}
        for chunk in self.client.completions.create(model=MODEL, prompt=id_prompts, max_tokens=3, temperature=0,
                                                    stream=True):
            for c in chunk.choices:
                texts[c.index] = texts.get(c.index, "") + c.text
        single = self.client.completions.create(model=MODEL, prompt=id_prompts[1], max_tokens=3, temperature=0)
        self.assertEqual(sorted(texts), [0, 1])
        self.assertEqual(texts[1], single.choices[0].text)
        for bad in ([[], [1, 2]], [1, "x"], ["x", 5], [[1, "x"]]):
            status, text, _ = self.seat.post("/v1/completions", {"model": MODEL, "prompt": bad, "max_tokens": 2})
            self.assertEqual(status, 400, (bad, text))
            self.assertEqual(json.loads(text)["error"]["param"], "prompt", bad)
        status, text, _ = self.seat.post("/v1/completions", {"model": MODEL, "prompt": ["x"] * 1000, "max_tokens": 2})
        self.assertEqual(status, 400, text)
        self.assertIn("max_queue", json.loads(text)["error"]["message"])

    def test_completions_top_logprobs_list_the_likeliest_first(self):
        # The legacy format is a dict per position: the client keeps the
        # order it was written in, which must be by probability (a sorted map
        # once wrote it alphabetically).
        r = self.client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=6, temperature=1.0,
                                           seed=3, logprobs=5)
        tops = r.choices[0].logprobs.top_logprobs
        self.assertEqual(len(tops), 6)
        for top in tops:
            values = list(top.values())
            self.assertGreaterEqual(len(values), 2)
            self.assertEqual(values, sorted(values, reverse=True), top)

    def test_streaming_with_usage_equals_non_streaming(self):
        full = self.chat("tell me something", max_tokens=12, temperature=0.9, seed=7)
        stream = self.chat("tell me something", max_tokens=12, temperature=0.9, seed=7, stream=True,
                           stream_options={"include_usage": True})
        text, usage, finish = "", None, None
        for chunk in stream:
            if chunk.usage:
                usage = chunk.usage
            for c in chunk.choices:
                text += c.delta.content or ""
                finish = c.finish_reason or finish
        self.assertEqual(text, full.choices[0].message.content)
        self.assertEqual(finish, "length")
        self.assertEqual(usage.completion_tokens, 12)
        self.assertEqual(usage.prompt_tokens, full.usage.prompt_tokens)

    def test_completions_streaming(self):
        text = ""
        for chunk in self.client.completions.create(model=MODEL, prompt="abc", max_tokens=6, temperature=0,
                                                    stream=True):
            text += chunk.choices[0].text if chunk.choices else ""
        full = self.client.completions.create(model=MODEL, prompt="abc", max_tokens=6, temperature=0)
        self.assertEqual(text, full.choices[0].text)

    def test_repeated_prompt_hits_the_prefix_cache(self):
        text = "prefix cache probe " + "lorem ipsum dolor sit amet " * 12
        first = self.chat(text, max_tokens=2, temperature=0)
        self.assertEqual(first.usage.prompt_tokens_details.cached_tokens, 0)  # present, as OpenAI writes it
        second = self.chat(text, max_tokens=2, temperature=0)
        details = second.usage.prompt_tokens_details
        self.assertIsNotNone(details)
        self.assertGreaterEqual(details.cached_tokens, 16)
        self.assertLess(details.cached_tokens, second.usage.prompt_tokens)
        self.assertEqual(first.choices[0].message.content, second.choices[0].message.content)

    def test_n_equals_two(self):
        r = self.chat("two answers", max_tokens=10, temperature=1.0, n=2, seed=3)
        self.assertEqual(len(r.choices), 2)
        self.assertEqual(sorted(c.index for c in r.choices), [0, 1])
        self.assertNotEqual(r.choices[0].message.content, r.choices[1].message.content)
        self.assertEqual(r.usage.completion_tokens, 20)

    def test_stop_string(self):
        r = self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stop=["three"])
        self.assertEqual(r.choices[0].message.content, "one two ")
        self.assertEqual(r.choices[0].finish_reason, "stop")
        text = ""
        for chunk in self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stop=["four"], stream=True):
            for c in chunk.choices:
                text += c.delta.content or ""
        self.assertEqual(text, "one two three ")

    # -------------------------------------------------- vLLM's extensions
    def test_ignore_eos_and_min_tokens_run_past_the_end_token(self):
        script = ids(SCRIPTS["HELLO_PROSE"])
        plain = self.chat("Please HELLO_PROSE now", max_tokens=40, temperature=0)
        self.assertEqual(plain.usage.completion_tokens, len(script) + 1)  # and <turn|>
        for extra in ({"ignore_eos": True}, {"min_tokens": len(script) + 4}):
            r = self.chat("Please HELLO_PROSE now", max_tokens=len(script) + 6, temperature=0, extra_body=extra)
            self.assertEqual(r.choices[0].finish_reason, "length", extra)
            self.assertEqual(r.usage.completion_tokens, len(script) + 6, extra)
            self.assertTrue(r.choices[0].message.content.startswith(SCRIPTS["HELLO_PROSE"]), extra)
        # min_tokens already reached: the end token stops it as before.
        r = self.chat("Please HELLO_PROSE now", max_tokens=40, temperature=0, extra_body={"min_tokens": 3})
        self.assertEqual(r.usage.completion_tokens, len(script) + 1)
        status, text, _ = self.seat.post("/v1/chat/completions", {
            "model": MODEL, "messages": [{"role": "user", "content": "x"}], "max_tokens": 2, "min_tokens": 3})
        self.assertEqual(status, 400, text)
        self.assertEqual(json.loads(text)["error"]["param"], "min_tokens")

    def test_min_tokens_defers_stop_strings_too(self):
        # As vLLM: before min_tokens no stop string ends the output.
        r = self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stop=["two"])
        self.assertEqual(r.choices[0].message.content, "one ")
        r = self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stop=["two"],
                      extra_body={"min_tokens": 4})
        self.assertEqual(r.choices[0].message.content, SCRIPTS["COUNT_STOP"])

    def test_allowed_token_ids_limit_every_draw(self):
        allowed = ids(" apple") + ids(" pear")
        r = self.client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=8, temperature=1.0,
                                           seed=3, logprobs=0,
                                           extra_body={"allowed_token_ids": allowed, "return_tokens_as_token_ids": True})
        drawn = [int(t.split(":")[1]) for t in r.choices[0].logprobs.tokens]
        self.assertEqual(len(drawn), 8)
        self.assertTrue(set(drawn) <= set(allowed), drawn)
        for bad in ([], [_tok.get_vocab_size() + 5], "1"):
            status, text, _ = self.seat.post("/v1/completions", {"model": MODEL, "prompt": "x",
                                                                 "allowed_token_ids": bad})
            self.assertEqual(status, 400, (bad, text))
            self.assertEqual(json.loads(text)["error"]["param"], "allowed_token_ids")

    def test_include_stop_str_in_output_keeps_the_stop_string(self):
        r = self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stop=["three"],
                      extra_body={"include_stop_str_in_output": True})
        self.assertEqual(r.choices[0].message.content, "one two three")
        self.assertEqual(r.choices[0].stop_reason, "three")
        text = ""
        for chunk in self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stop=["four"], stream=True,
                               extra_body={"include_stop_str_in_output": True}):
            for c in chunk.choices:
                text += c.delta.content or ""
        self.assertEqual(text, "one two three four")

    def test_truncate_prompt_tokens_keeps_the_last_tokens(self):
        prompt = ids("alpha beta gamma delta epsilon zeta eta theta")
        r = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=2, temperature=0, echo=True,
                                           extra_body={"truncate_prompt_tokens": 4})
        self.assertEqual(r.usage.prompt_tokens, 4)
        self.assertTrue(r.choices[0].text.startswith(decode(prompt[-4:])))
        r = self.chat("hi", max_tokens=2, extra_body={"truncate_prompt_tokens": 3})
        self.assertEqual(r.usage.prompt_tokens, 3)
        status, text, _ = self.seat.post("/v1/completions", {"model": MODEL, "prompt": "x",
                                                             "truncate_prompt_tokens": 0})
        self.assertEqual(status, 400, text)

    def test_stop_reason_names_what_stopped_the_output(self):
        # vLLM's stop_reason: the stop string, or the stop token's id when it
        # is not the tokenizer's EOS (the scripted model ends with <turn|>);
        # null for max_tokens.  Ids come from the tokenizers library.
        turn_end = _tok.token_to_id("<turn|>")
        r = self.chat("Please HELLO_PROSE", max_tokens=40, temperature=0)
        self.assertEqual((r.choices[0].finish_reason, r.choices[0].stop_reason), ("stop", turn_end))
        r = self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stop=["zzz", "three"])
        self.assertEqual((r.choices[0].finish_reason, r.choices[0].stop_reason), ("stop", "three"))
        r = self.chat("Please COUNT_STOP now", max_tokens=2, temperature=0, stop=["three"])
        self.assertEqual((r.choices[0].finish_reason, r.choices[0].stop_reason), ("length", None))
        script = ids(SCRIPTS["COUNT_STOP"])
        k = next(i for i in range(2, len(script)) if script[i] not in script[:i])
        r = self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, extra_body={"stop_token_ids": [script[k]]})
        self.assertEqual(r.choices[0].message.content, decode(script[:k]))
        self.assertEqual((r.choices[0].finish_reason, r.choices[0].stop_reason), ("stop", script[k]))
        # Streaming: the finishing chunk carries it; the legacy endpoint too.
        last = [c for chunk in self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stop=["four"], stream=True)
                for c in chunk.choices if c.finish_reason]
        self.assertEqual([(c.finish_reason, c.model_extra.get("stop_reason")) for c in last], [("stop", "four")])
        prompt = ids("Please COUNT_STOP now") + ids("<|turn>model\n")  # the script's trigger, then its turn
        r = self.client.completions.create(model=MODEL, prompt=prompt, max_tokens=40, temperature=0, stop=["five"])
        self.assertEqual((r.choices[0].finish_reason, r.choices[0].stop_reason), ("stop", "five"))

    def test_ordinary_tokens_that_spell_control_tokens_stay_text(self):
        # Control tokens are known by their ids: ordinary pieces that spell
        # them are text, and special tokens of no role are dropped; the
        # tokenizers library's decode (skip_special_tokens) is the oracle.
        expected = _tok.decode(RAW_SCRIPTS["SPELLED_MARKERS"], skip_special_tokens=True)
        for tools in (None, [WEATHER_TOOL]):
            kw = {"tools": tools} if tools else {}
            r = self.chat("Please SPELLED_MARKERS now", max_tokens=40, temperature=0, **kw)
            msg = r.choices[0].message
            self.assertEqual(msg.content, expected)
            self.assertIsNone(msg.tool_calls)
            self.assertIsNone((msg.model_extra or {}).get("reasoning_content"))
            text = "".join(c.delta.content or "" for chunk in
                           self.chat("Please SPELLED_MARKERS now", max_tokens=40, temperature=0, stream=True, **kw)
                           for c in chunk.choices)
            self.assertEqual(text, expected)

    def test_end_token_counts_and_has_a_logprob(self):
        # vLLM counts the sampled end token and lists its logprob; its text
        # is not part of the answer.  return_tokens_as_token_ids names ids.
        script = ids(SCRIPTS["HELLO_PROSE"])
        r = self.chat("Please HELLO_PROSE", max_tokens=40, temperature=0, logprobs=True,
                      extra_body={"return_tokens_as_token_ids": True})
        tokens = [e.token for e in r.choices[0].logprobs.content]
        self.assertEqual(tokens, [f"token_id:{i}" for i in script + [_tok.token_to_id("<turn|>")]])
        self.assertEqual(r.usage.completion_tokens, len(script) + 1)
        self.assertEqual(r.choices[0].message.content, decode(script))
        c = self.client.completions.create(model=MODEL, prompt=ids("Please HELLO_PROSE") + ids("<|turn>model\n"),
                                           max_tokens=40, temperature=0, logprobs=0)
        self.assertEqual(c.usage.completion_tokens, len(script) + 1)
        self.assertEqual(c.choices[0].logprobs.tokens[-1], "<turn|>")
        self.assertEqual(c.choices[0].text, decode(script))

    def test_completions_top_logprobs_include_the_sampled_token(self):
        # OpenAI's legacy API: "always return the logprob of the sampled
        # token, so there may be up to logprobs+1 elements".
        for n_top in (0, 1, 3):
            r = self.client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=6,
                                               temperature=1.0, seed=7, logprobs=n_top)
            lp = r.choices[0].logprobs
            for tok, val, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
                self.assertIn(tok, top)
                self.assertEqual(top[tok], val)
                self.assertIn(len(top), (n_top, n_top + 1) if n_top else (1,))

    def test_continuous_usage_stats_put_usage_on_every_chunk(self):
        chunks = list(self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0, stream=True,
                                stream_options={"include_usage": True, "continuous_usage_stats": True}))
        self.assertTrue(all(c.usage is not None for c in chunks))
        counts = [c.usage.completion_tokens for c in chunks]
        self.assertEqual(counts, sorted(counts))
        final = self.chat("Please COUNT_STOP now", max_tokens=40, temperature=0)
        self.assertEqual(chunks[-1].usage.completion_tokens, final.usage.completion_tokens)
        self.assertEqual(chunks[-1].usage.prompt_tokens, final.usage.prompt_tokens)
        # Without include_usage nothing carries usage (vLLM's rule).
        plain = list(self.chat("Please COUNT_STOP now", max_tokens=5, temperature=0, stream=True,
                               stream_options={"continuous_usage_stats": True}))
        self.assertTrue(all(c.usage is None for c in plain))

    def test_seed_reproducibility(self):
        a = self.chat("random words", max_tokens=16, temperature=1.0, seed=1234).choices[0].message.content
        b = self.chat("random words", max_tokens=16, temperature=1.0, seed=1234).choices[0].message.content
        c = self.chat("random words", max_tokens=16, temperature=1.0, seed=999).choices[0].message.content
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)

    def test_a_seeded_prompt_answers_alike_alone_and_beside_others(self):
        # vLLM: each prompt is a request of its own, choice j of each taking
        # seed + j, so a batch of prompts reproduces one prompt at a time.
        base = dict(model=MODEL, temperature=1.0, seed=1234, max_tokens=8)
        alone = [c.text for c in self.client.completions.create(prompt="Tell me", n=2, **base).choices]
        batch = [c.text for c in self.client.completions.create(prompt=["Something else", "Tell me"], n=2,
                                                                **base).choices]
        self.assertEqual(batch[2:], alone)
        self.assertNotEqual(alone[0], alone[1])  # the two choices still differ

    def test_a_stop_string_spelled_by_byte_tokens_stops_at_its_last_byte(self):
        # U+2615 is three byte-fallback tokens: the output must end at the
        # third, as at any other token, not one token later.
        text = SCRIPTS["COFFEE_CUP"]
        out_ids = ids(text)
        k = next(n for n in range(1, len(out_ids) + 1) if "\u2615" in _tok.decode(out_ids[:n]))
        prompt = "Please COFFEE_CUP now<|turn>model\n"
        for max_tokens in (64, k):
            for stream in (False, True):
                with self.subTest(max_tokens=max_tokens, stream=stream):
                    kw = dict(model=MODEL, prompt=prompt, max_tokens=max_tokens, temperature=0, stop=["\u2615"],
                              logprobs=0)
                    if stream:
                        chunks = list(self.client.completions.create(stream=True,
                                                                     stream_options={"include_usage": True}, **kw))
                        got = "".join(c.choices[0].text for c in chunks if c.choices)
                        finish = [c.choices[0].finish_reason for c in chunks if c.choices][-1]
                        used = chunks[-1].usage.completion_tokens
                    else:
                        r = self.client.completions.create(**kw)
                        got, finish, used = r.choices[0].text, r.choices[0].finish_reason, r.usage.completion_tokens
                    self.assertEqual(got, text[:text.index("\u2615")])
                    self.assertEqual(finish, "stop")
                    self.assertEqual(used, k)

    def test_a_null_max_completion_tokens_is_absent_in_errors_too(self):
        for path, body in (("/v1/completions", {"prompt": "hi"}),
                           ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})):
            status, text, _ = self.seat.post(path, dict(body, model=MODEL, max_tokens=0, max_completion_tokens=None))
            self.assertEqual(status, 400, text)
            self.assertEqual(json.loads(text)["error"]["param"], "max_tokens", path)

    # ------------------------------------------------------------ logit_bias
    # On its script the scripted model gives the next token logit 30 and
    # every other token -30 (off it, at most 4 and -20), so +100 on another
    # token must win every step, -100 on the script's token must change the
    # first one, and the logprobs reported stay those of the model's own
    # logits (about -60 for the first token, the script's token still on top).
    def test_logit_bias_steers_and_bans(self):
        zebra = ids(" zebra")[0]
        first = ids(SCRIPTS["HELLO_PROSE"])[0]
        r = self.chat("Please HELLO_PROSE now", max_tokens=3, temperature=0, logprobs=True, top_logprobs=1,
                      logit_bias={str(zebra): 100})
        self.assertEqual(r.choices[0].message.content, decode([zebra] * 3))
        content = r.choices[0].logprobs.content
        self.assertEqual(len(content), 3)
        self.assertLess(content[0].logprob, -50.0)
        self.assertEqual(content[0].top_logprobs[0].token, decode([first]))
        self.assertGreater(content[0].top_logprobs[0].logprob, -1e-3)
        plain = self.chat("Please HELLO_PROSE now", max_tokens=2, temperature=0, logprobs=True)
        self.assertEqual(plain.choices[0].logprobs.content[0].token, decode([first]))
        banned = self.chat("Please HELLO_PROSE now", max_tokens=2, temperature=0, logprobs=True,
                           logit_bias={str(first): -100})
        self.assertNotEqual(banned.choices[0].logprobs.content[0].token,
                            plain.choices[0].logprobs.content[0].token)
        # The legacy endpoint and a seeded draw obey it as well.
        c = self.client.completions.create(model=MODEL, prompt="Once upon a time", max_tokens=4, temperature=1.0,
                                           seed=5, logit_bias={str(zebra): 100})
        self.assertEqual(c.choices[0].text, decode([zebra] * 4))

    def test_logit_bias_errors_name_the_entry(self):
        vocab = _tok.get_vocab_size()
        for bias, expect in [({"abc": 1}, "decimal"), ({"-1": 1}, "decimal"), ({"0x10": 1}, "decimal"),
                             ({"5": 101}, "from -100 to 100"), ({"5": "1"}, "a number"),
                             ({"5": 1, "05": 2}, "twice"), ({str(vocab + 10): 1}, "outside the vocabulary"),
                             ([1, 2], "an object")]:
            body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}], "logit_bias": bias}
            status, text, _ = self.seat.post("/v1/chat/completions", body)
            self.assertEqual(status, 400, (bias, text))
            err = json.loads(text)["error"]
            self.assertIn(expect, err["message"], bias)
            self.assertEqual(err["param"], "logit_bias", bias)

    def test_logprobs_are_finite_and_consistent(self):
        r = self.chat("Please HELLO_PROSE now", max_tokens=64, temperature=0, logprobs=True, top_logprobs=3)
        content = r.choices[0].logprobs.content
        self.assertEqual(len(content), r.usage.completion_tokens)
        for entry in content:
            self.assertTrue(math.isfinite(entry.logprob))
            self.assertLessEqual(entry.logprob, 0.0)
            self.assertEqual(len(entry.top_logprobs), 3)
            self.assertEqual(entry.top_logprobs[0].token, entry.token)  # greedy picks the top token
            self.assertAlmostEqual(entry.top_logprobs[0].logprob, entry.logprob, places=5)
        self.assertEqual(content[-1].token, "<turn|>")  # the sampled end token is listed last
        self.assertEqual("".join(e.token for e in content[:-1]), r.choices[0].message.content)

    def test_logprobs_of_characters_split_over_byte_tokens(self):
        # A byte-fallback token alone is no character: its token text is what
        # Hugging Face tokenizers decodes it to (U+FFFD), its bytes are raw,
        # and the bytes of consecutive tokens join into the text.
        text = SCRIPTS["COFFEE_CUP"]
        out_ids = ids(text)
        self.assertTrue(any(_tok.id_to_token(i).startswith("<0x") for i in out_ids))
        r = self.chat("Please COFFEE_CUP now", max_tokens=64, temperature=0, logprobs=True, top_logprobs=2)
        self.assertEqual(r.choices[0].message.content, text)
        content = r.choices[0].logprobs.content[:len(out_ids)]
        self.assertEqual([e.token for e in content], [_tok.decode([i]) for i in out_ids])
        self.assertEqual(b"".join(bytes(e.bytes) for e in content).decode("utf-8"), text)
        for e in content:
            self.assertEqual(e.top_logprobs[0].token, e.token)
            self.assertEqual(e.top_logprobs[0].bytes, e.bytes)
        c = self.client.completions.create(model=MODEL, prompt="Please COFFEE_CUP now<|turn>model\n", max_tokens=64,
                                           temperature=0, logprobs=1)
        self.assertEqual(c.choices[0].text, text)
        self.assertEqual(c.choices[0].logprobs.tokens[:len(out_ids)], [_tok.decode([i]) for i in out_ids])
        # text_offset: where each token's text starts, in characters.
        tokens = c.choices[0].logprobs.tokens
        self.assertEqual(c.choices[0].logprobs.text_offset, [sum(len(t) for t in tokens[:i]) for i in range(len(tokens))])
        stream = self.client.completions.create(model=MODEL, prompt="Please COFFEE_CUP now<|turn>model\n",
                                                max_tokens=64, temperature=0, logprobs=1, stream=True)
        chunks = [ch.logprobs for chunk in stream for ch in chunk.choices if ch.logprobs]
        self.assertEqual([t for lp in chunks for t in lp.tokens][:len(out_ids)], [_tok.decode([i]) for i in out_ids])
        self.assertEqual([o for lp in chunks for o in lp.text_offset], c.choices[0].logprobs.text_offset)

    # ----------------------------------------------------------------- tools
    def assert_weather_call(self, r, finish="tool_calls"):
        msg = r.choices[0].message
        self.assertEqual(r.choices[0].finish_reason, finish)
        self.assertEqual(len(msg.tool_calls), 1)
        call = msg.tool_calls[0]
        self.assertEqual(call.function.name, "get_weather")
        self.assertEqual(json.loads(call.function.arguments), {"city": "Paris", "days": 2})
        self.assertTrue(call.id)
        self.assertFalse(msg.content)

    def test_tool_choice_auto(self):
        self.assert_weather_call(self.chat("Please WEATHER_PARIS now", tools=[WEATHER_TOOL], tool_choice="auto",
                                           max_tokens=64, temperature=0))

    def test_tool_choice_required_and_named(self):
        self.assert_weather_call(self.chat("Please WEATHER_PARIS now", tools=[WEATHER_TOOL], tool_choice="required",
                                           max_tokens=64, temperature=0))
        self.assert_weather_call(self.chat("Please WEATHER_PARIS now", tools=[WEATHER_TOOL], max_tokens=64, temperature=0,
                                           tool_choice={"type": "function", "function": {"name": "get_weather"}}),
                                 finish="stop")  # a named tool_choice finishes with "stop", as OpenAI's API does

    def test_tool_choice_none_leaves_tools_out_of_the_prompt(self):
        plain = self.chat("Please HELLO_PROSE now", max_tokens=64, temperature=0)
        none = self.chat("Please HELLO_PROSE now", tools=[WEATHER_TOOL], tool_choice="none", max_tokens=64, temperature=0)
        auto = self.chat("Please HELLO_PROSE now", tools=[WEATHER_TOOL], tool_choice="auto", max_tokens=64, temperature=0)
        self.assertEqual(none.usage.prompt_tokens, plain.usage.prompt_tokens)
        self.assertGreater(auto.usage.prompt_tokens, plain.usage.prompt_tokens)
        self.assertIsNone(none.choices[0].message.tool_calls)
        self.assertEqual(none.choices[0].message.content, plain.choices[0].message.content)

    def test_tool_result_round_trip_renders(self):
        messages = [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "get_weather", "arguments": '{"city": "Paris", "days": 2}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
        ]
        r = self.client.chat.completions.create(model=MODEL, messages=messages, tools=[WEATHER_TOOL], max_tokens=4)
        self.assertEqual(r.choices[0].finish_reason, "length")
        bad = [dict(messages[1], tool_calls=[{"id": "c", "type": "function",
                                                 "function": {"name": "get_weather", "arguments": "{not json"}}])]
        with self.assertRaises(openai.BadRequestError):
            self.client.chat.completions.create(model=MODEL, messages=[messages[0]] + bad, max_tokens=4)

    def test_streamed_tool_call_deltas_assemble_to_the_same_call(self):
        name, args, ids_seen = "", "", set()
        finish = None
        for chunk in self.chat("Please WEATHER_PARIS now", tools=[WEATHER_TOOL], max_tokens=64, temperature=0, stream=True):
            for c in chunk.choices:
                for tc in c.delta.tool_calls or []:
                    self.assertEqual(tc.index, 0)
                    if tc.id:
                        ids_seen.add(tc.id)
                    if tc.function and tc.function.name:
                        name = tc.function.name
                    if tc.function and tc.function.arguments:
                        args += tc.function.arguments
                finish = c.finish_reason or finish
        self.assertEqual(name, "get_weather")
        self.assertEqual(json.loads(args), {"city": "Paris", "days": 2})
        self.assertEqual(len(ids_seen), 1)
        self.assertEqual(finish, "tool_calls")

    def test_openai_stream_helper_assembles_the_streamed_call(self):
        # The SDK's stream helper joins every string a delta repeats: id,
        # type and name must come only in a call's first delta.
        messages = [{"role": "user", "content": "Please WEATHER_PARIS now"}]
        with self.client.chat.completions.stream(model=MODEL, messages=messages, tools=[WEATHER_TOOL], max_tokens=64,
                                                 temperature=0) as stream:
            final = stream.get_final_completion()
        calls = final.choices[0].message.tool_calls
        self.assertEqual(len(calls), 1)
        self.assertEqual(calls[0].function.name, "get_weather")
        self.assertEqual(calls[0].type, "function")
        self.assertRegex(calls[0].id, r"^call_[A-Za-z0-9]{24}$")
        self.assertEqual(json.loads(calls[0].function.arguments), {"city": "Paris", "days": 2})

    # ---------------------------------------------------------------- errors
    def test_bad_key_is_401(self):
        import openai as oa
        bad = oa.OpenAI(base_url=self.seat.base_url + "/v1", api_key="wrong", max_retries=0)
        with self.assertRaises(oa.AuthenticationError):
            bad.models.list()
        status, _ = self.seat.get("/health", key=None)
        self.assertEqual(status, 200)
        status, _ = self.seat.get("/v1/models", key=None)
        self.assertEqual(status, 401)
        # Counted under the endpoint it was refused at, not as "other".
        _, metrics = self.seat.get("/metrics")
        self.assertRegex(metrics, r'seatrt_requests_total\{endpoint="models",status="401"\} [1-9]')

    def test_unknown_model_is_404_never_substituted(self):
        with self.assertRaises(openai.NotFoundError) as e:
            self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}])
        self.assertIn("gpt-4o", str(e.exception))

    def test_malformed_json_is_400(self):
        status, body, _ = self.seat.post("/v1/chat/completions", None, raw=b'{"model": "scripted", "messages": [')
        self.assertEqual(status, 400)
        self.assertIn("not valid JSON", json.loads(body)["error"]["message"])

    def test_wrong_field_types_name_the_field(self):
        for field, value, expect in [("temperature", "hot", "a number"), ("max_tokens", 1.5, "an integer"),
                                     ("messages", "hi", "an array"), ("stop", 5, "string")]:
            body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}], field: value}
            status, text, _ = self.seat.post("/v1/chat/completions", body)
            self.assertEqual(status, 400, field)
            err = json.loads(text)["error"]
            self.assertIn(field, err["message"])
            self.assertIn(expect, err["message"])
            self.assertEqual(err["param"], field)
        # A truthy string would turn the template's thinking on and leave the
        # reasoning parser's off.
        body = {"model": MODEL, "messages": [{"role": "user", "content": "x"}],
                "chat_template_kwargs": {"enable_thinking": "yes"}}
        status, text, _ = self.seat.post("/v1/chat/completions", body)
        self.assertEqual(status, 400, text)
        self.assertEqual(json.loads(text)["error"]["param"], "chat_template_kwargs.enable_thinking")

    def test_unknown_field_and_image_parts_are_400(self):
        with self.assertRaises(openai.BadRequestError):
            self.chat("x", extra_body={"temprature": 0.5})
        with self.assertRaises(openai.BadRequestError) as e:
            self.client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]}])
        self.assertIn("image", str(e.exception))

    def test_prompt_longer_than_context_is_400(self):
        with self.assertRaises(openai.BadRequestError) as e:
            self.chat("word " * 600, max_tokens=4)
        self.assertIn("maximum context length is 512", str(e.exception))
        # Megabytes are refused before tokenizing (the message says so: it
        # counts bytes, not tokens), the same way for both endpoints.
        for call in (lambda text: self.chat(text, max_tokens=4),
                     lambda text: self.client.completions.create(model=MODEL, prompt=text, max_tokens=4)):
            with self.assertRaises(openai.BadRequestError) as e:
                call("word " * 4_000_000)
            self.assertIn("more than any 512 tokens can hold", str(e.exception))

    def test_max_tokens_beyond_context_is_400(self):
        with self.assertRaises(openai.BadRequestError) as e:
            self.chat("short", max_tokens=600)
        self.assertIn("max_tokens", str(e.exception))

    # -------------------------------------------------------- tokenizer, seat
    def test_tokenize_and_detokenize(self):
        status, body, _ = self.seat.post("/tokenize", {"model": MODEL, "prompt": "Hello there", "add_special_tokens": False})
        self.assertEqual(status, 200)
        self.assertEqual(json.loads(body)["tokens"], ids("Hello there"))
        status, body, _ = self.seat.post("/detokenize", {"model": MODEL, "tokens": ids("Hello there")})
        self.assertEqual(json.loads(body)["prompt"], decode(ids("Hello there")))
        status, body, _ = self.seat.post("/detokenize", {"model": MODEL, "tokens": [5], "token": [6]})
        self.assertEqual(status, 400, body)
        self.assertEqual(json.loads(body)["error"]["param"], "token")

    def test_tokenize_messages_counts_what_the_chat_endpoint_prompts(self):
        # Tools and chat_template_kwargs change the rendered prompt: /tokenize
        # must count the chat's own prompt_tokens for the same body.
        chat = {"messages": [{"role": "user", "content": "Please HELLO_PROSE"}], "tools": [WEATHER_TOOL],
                "chat_template_kwargs": {"enable_thinking": True}}
        r = self.client.chat.completions.create(model=MODEL, max_tokens=1, temperature=0, messages=chat["messages"],
                                                tools=chat["tools"],
                                                extra_body={"chat_template_kwargs": chat["chat_template_kwargs"]})
        status, body, _ = self.seat.post("/tokenize", dict(chat, model=MODEL))
        self.assertEqual(status, 200, body)
        self.assertEqual(json.loads(body)["count"], r.usage.prompt_tokens)
        plain = json.loads(self.seat.post("/tokenize", {"model": MODEL, "messages": chat["messages"]})[1])["count"]
        self.assertLess(plain, r.usage.prompt_tokens)
        for bad, says in (({"model": MODEL, "messages": chat["messages"], "bogus": 1}, "unknown field 'bogus'"),
                          ({"model": MODEL, "prompt": "hi", "tools": [WEATHER_TOOL]}, "goes with 'messages'"),
                          ({"model": MODEL, "prompt": "hi", "messages": chat["messages"]}, "not both")):
            status, body, _ = self.seat.post("/tokenize", bad)
            self.assertEqual(status, 400, body)
            self.assertIn(says, json.loads(body)["error"]["message"])
        # add_special_tokens is honoured with messages too (default false:
        # the template wrote them), as vLLM's /tokenize does.
        extra = len(_tok.encode("x", add_special_tokens=True).ids) - len(_tok.encode("x", add_special_tokens=False).ids)
        with_special = json.loads(self.seat.post("/tokenize", {"model": MODEL, "messages": chat["messages"],
                                                               "add_special_tokens": True})[1])["count"]
        self.assertEqual(with_special, plain + extra)

    def test_seat_report_and_metrics(self):
        status, body = self.seat.get("/v1/seat")
        self.assertEqual(status, 200)
        seat = json.loads(body)
        kv = seat["kv_pool"]
        self.assertGreater(kv["bytes"], 0)
        self.assertGreaterEqual(kv["tokens"], 2 * 512)
        self.assertAlmostEqual(kv["max_context_multiple"], kv["tokens"] / 512, places=6)
        self.assertTrue(any(p["role"] == "tool_parser" for p in seat["plugins"]))
        self.assertTrue(all(p["version"] for p in seat["plugins"]))
        # The CPU provider has a sample op: tokens are chosen there, not on the host.
        self.assertEqual(seat["sampling"], "kernel provider")
        self.assertIs(seat["logit_bias"], True)
        self.assertIn("KV pool", self.seat.read_log())
        _, metrics = self.seat.get("/metrics")
        for name in ["seatrt_requests_total", "seatrt_prompt_tokens_total", "seatrt_generation_tokens_total",
                     "seatrt_time_to_first_token_seconds_bucket", "seatrt_inter_token_latency_seconds_bucket",
                     "seatrt_queue_depth", "seatrt_running_sequences", "seatrt_kv_blocks_used",
                     "seatrt_kv_blocks_total", "seatrt_preemptions_total", "seatrt_non_finite_logits_total"]:
            self.assertIn(name, metrics)

    def test_ready_after_canary(self):
        status, body = self.seat.get("/ready", key=None)
        self.assertEqual(status, 200, body)


if __name__ == "__main__":
    unittest.main(verbosity=2)
