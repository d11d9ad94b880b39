"""Starts a real `seatrt serve` on loopback for the server tests.

The seat is the scripted test architecture (tests/server/plugins) with the
Gemma-style test tokenizer, the real Gemma-4 chat template, the gemma4
parsers and the CPU kernel provider.  Token ids for scripts are computed
here with Hugging Face `tokenizers` (an implementation independent of
seatrt's own tokenizer)."""

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

from tokenizers import Tokenizer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOKENIZER_JSON = os.path.join(ROOT, "tests/fixtures/tokenizer/tokenizer.json")
TEMPLATE = os.path.join(ROOT, "tests/fixtures/templates/gemma4_chat_template.jinja")
API_KEY = "test-key-0123456789"

_tok = Tokenizer.from_file(TOKENIZER_JSON)


def ids(text):
    return _tok.encode(text, add_special_tokens=False).ids


def decode(token_ids):
    return _tok.decode(token_ids, skip_special_tokens=True)


# Scripts the scripted model replays when the prompt holds the trigger word.
TOOL_CALL = '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:2}<tool_call|>'
SCRIPTS = {
    "HELLO_PROSE": "Hello there, friend. The weather is fine today.",
    "WEATHER_PARIS": TOOL_CALL,
    "COUNT_STOP": "one two three four five six",
    # Characters the test tokenizer spells with byte-fallback tokens.
    "COFFEE_CUP": "A cup \u2615 of caf\u00e9.",
    "THINK_THEN_ANSWER": "<|channel>thought\nLet me think.<channel|>The answer is 4.",
    # The prompt of `seatrt verify`'s tool-call check.
    " Use the get_weather tool.": TOOL_CALL,
}
NAN_SCRIPT = {"trigger": "NAN_MIDWAY", "output": "alpha beta gamma delta", "nan_at": 3}
# Scripts given as token ids.  SPELLED_MARKERS: ordinary vocabulary pieces
# whose text spells control tokens (the test tokenizer learned them from
# templates), between the special tokens <unk> and <mask> that are no
# control tokens of the format.
RAW_SCRIPTS = {
    "SPELLED_MARKERS": ids("Watch") + [_tok.token_to_id(p) for p in
                                       ("\u2581`<|channel>`", "\u2581`<channel|>`", "<unk>", "\u2581<|\"|>",
                                        "\u2581`<|tool_call>`", "<mask>")] + ids(" done"),
}


def text_token_ids():
    """Plain word pieces the free-running model draws from."""
    vocab = _tok.get_vocab()
    out = []
    for piece, i in sorted(vocab.items(), key=lambda kv: kv[1]):
        word = piece.replace("\u2581", "")
        if len(word) >= 2 and word.isalpha() and word.isascii():
            out.append(i)
    return out[:400]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_safetensors(path):
    header = json.dumps({"scripted.dummy": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    header += b" " * ((8 - len(header) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + b"\0\0\0\0")


def make_model_dir(directory, nan=False, window=16, max_position=4096):
    os.makedirs(directory, exist_ok=True)
    # Triggers are matched as they tokenize inside a prompt: after a space
    # (tests write "Please WORD now").
    def trigger(word):
        return ids(word if word.startswith(" ") else " " + word)

    scripts = [{"trigger": trigger(k), "output": ids(v)} for k, v in SCRIPTS.items()]
    scripts += [{"trigger": trigger(k), "output": v} for k, v in RAW_SCRIPTS.items()]
    scripts.append({"trigger": trigger(NAN_SCRIPT["trigger"]), "output": ids(NAN_SCRIPT["output"]),
                    "nan_at": NAN_SCRIPT["nan_at"]})
    config = {
        "model_type": "seatrt-scripted",
        "architectures": ["SeatrtScripted"],
        "vocab_size": _tok.get_vocab_size(),
        "max_position_embeddings": max_position,
        "scripted": {
            "layers": [
                {"kv_heads": 1, "head_dim": 4, "window": 0, "single_tensor": True},
                {"kv_heads": 1, "head_dim": 4, "window": window},
                {"kv_heads": 2, "head_dim": 4, "window": 0},
            ],
            "text_ids": text_token_ids(),
            "eos_id": _tok.token_to_id("<turn|>"),
            # The generation prompt with thinking on, and with it off.
            "start_markers": [ids("<|turn>model\n"), ids("<|turn>model\n<|channel>thought\n<channel|>")],
            "scripts": scripts,
            "nan": nan,
        },
    }
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(directory, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": [_tok.token_to_id("<eos>"), _tok.token_to_id("<turn|>")]}, f)
    write_safetensors(os.path.join(directory, "model.safetensors"))


def build_dir():
    return os.environ.get("SEATRT_BUILD_DIR", os.path.join(ROOT, "build"))


class Seat:
    """A running seat.  Use as a context manager."""

    def __init__(self, nan=False, max_num_seqs=8, kv_multiple=None, kv_bytes=None, max_model_len=512,
                 max_queue=256, drain_timeout_s=30.0, max_num_batched_tokens=256, block_size=16,
                 request_timeout_s=600.0,
                 served=("scripted", "scripted-alias"), server_extra="", tool_parser="gemma4",
                 reasoning_parser="gemma4"):
        self.tmp = tempfile.TemporaryDirectory(prefix="seatrt-server-test-")
        self.port = free_port()
        self.base_url = "http://127.0.0.1:%d" % self.port
        model_dir = os.path.join(self.tmp.name, "model")
        make_model_dir(model_dir, nan=nan)
        cache = ('kv_cache_memory = %d' % kv_bytes) if kv_bytes else \
            ('kv_cache_max_context_multiple = %s' % (kv_multiple or 2.0))
        seat = f"""
[seat]
name = "scripted-test"
served_model_names = {json.dumps(list(served))}

[server]
host = "127.0.0.1"
port = {self.port}
api_key_env = "SEATRT_TEST_API_KEY"
max_queue = {max_queue}
drain_timeout_s = {drain_timeout_s}
request_timeout_s = {request_timeout_s}
{server_extra}

[model]
path = "{model_dir}"
tokenizer = "{TOKENIZER_JSON}"
chat_template = "{TEMPLATE}"
max_model_len = {max_model_len}

[kernels]
provider = "cpu"

[cache]
{cache}
kv_cache_dtype = "bf16"
block_size = {block_size}

[scheduler]
max_num_seqs = {max_num_seqs}
max_num_batched_tokens = {max_num_batched_tokens}

[parsers]
{'tool = "%s"' % tool_parser if tool_parser else ""}
{'reasoning = "%s"' % reasoning_parser if reasoning_parser else ""}
exclude_tools_when_tool_choice_none = true

[parsers.chat_template_kwargs]
enable_thinking = false

[plugins]
search_paths = ["{os.path.join(build_dir(), 'plugins')}"]
"""
        self.seat_file = os.path.join(self.tmp.name, "seat.toml")
        with open(self.seat_file, "w") as f:
            f.write(seat)
        self.log_path = os.path.join(self.tmp.name, "server.log")
        self.proc = None

    def start(self, wait_ready=True):
        env = dict(os.environ, SEATRT_TEST_API_KEY=API_KEY)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([os.path.join(build_dir(), "bin", "seatrt"), "serve", self.seat_file],
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 120
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("seatrt serve exited %d:\n%s" % (self.proc.returncode, self.read_log()))
            try:
                status, _ = self.get("/health")
                if status == 200 and (not wait_ready or self.get("/ready")[0] == 200 or self.canary_done()):
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("seatrt serve did not come up:\n" + self.read_log())

    def canary_done(self):
        return "canary generation" in self.read_log()

    def read_log(self):
        with open(self.log_path) as f:
            return f.read()

    def get(self, path, key=API_KEY):
        req = urllib.request.Request(self.base_url + path)
        if key:
            req.add_header("Authorization", "Bearer " + key)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def post(self, path, body, key=API_KEY, raw=None):
        data = raw if raw is not None else json.dumps(body).encode()
        req = urllib.request.Request(self.base_url + path, data=data, method="POST")
        req.add_header("Content-Type", "application/json")
        if key:
            req.add_header("Authorization", "Bearer " + key)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, r.read().decode(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(), dict(e.headers)

    def metric(self, name):
        _, text = self.get("/metrics")
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        raise KeyError(name)

    def client(self):
        import openai
        return openai.OpenAI(base_url=self.base_url + "/v1", api_key=API_KEY, max_retries=0, timeout=120)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode if self.proc else None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        code = self.stop()
        if code not in (0, None) and exc[0] is None:
            sys.stderr.write(self.read_log())
        self.log.close()
        self.tmp.cleanup()


class DemoSeat(Seat):
    """The demo seat (configs/demo.toml: the tiny Gemma-4 fixture model on
    the CPU provider), served from the seat file itself with only its port,
    plugin path and file paths rewritten, an API key, and `kernels_extra`
    lines added to its [kernels] table."""

    def __init__(self, kernels_extra=""):
        self.tmp = tempfile.TemporaryDirectory(prefix="seatrt-demo-test-")
        self.port = free_port()
        self.base_url = "http://127.0.0.1:%d" % self.port
        with open(os.path.join(ROOT, "configs", "demo.toml")) as f:
            seat = f.read()
        configs = os.path.join(ROOT, "configs")
        # Paths in the seat are relative to its directory: make them absolute.
        seat = re.sub(r'"\.\./([^"]+)"', lambda m: '"%s"' % os.path.normpath(os.path.join(configs, "..", m.group(1))), seat)
        seat = re.sub(r"(?m)^port = \d+", "port = %d" % self.port, seat)
        seat = re.sub(r'(?m)^search_paths = .*$', 'search_paths = ["%s"]' % os.path.join(build_dir(), "plugins"), seat)
        seat = seat.replace("[server]\n", '[server]\napi_key_env = "SEATRT_TEST_API_KEY"\n', 1)
        if kernels_extra:
            seat = seat.replace("[kernels]\n", "[kernels]\n" + kernels_extra.rstrip("\n") + "\n", 1)
        self.seat_file = os.path.join(self.tmp.name, "demo.toml")
        with open(self.seat_file, "w") as f:
            f.write(seat)
        self.log_path = os.path.join(self.tmp.name, "server.log")
        self.proc = None


class SharedSeatTest(unittest.TestCase):
    """Test cases sharing one running scripted seat (cls.seat, cls.client),
    which must exit 0 on SIGTERM at the end."""

    @classmethod
    def setUpClass(cls):
        cls.seat = Seat().start()
        cls.client = cls.seat.client()

    @classmethod
    def tearDownClass(cls):
        code = cls.seat.stop()
        cls.seat.log.close()
        if code != 0:
            print(cls.seat.read_log())
        assert code == 0, "seatrt serve exited %s after SIGTERM" % code
