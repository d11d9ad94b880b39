#!/usr/bin/env python3
"""SDK example 4 end to end: build the "tinydense" architecture plugin out of
tree against the installed SDK, write its tiny random checkpoint, have
`seatrt check` load the seat, serve it on the CPU provider, and compare the
first generated token and its logprob with a plain-Python forward pass of
the same checkpoint (sdk/examples/04-architecture/make_tinydense.py)."""
import glob
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

from cli_util import BUILD, PLUGINS, SOURCE, check, finish, seatrt, tempdir, write_seat

EXAMPLE = os.path.join(SOURCE, "sdk", "examples", "04-architecture")
sys.path.insert(0, EXAMPLE)
sys.dont_write_bytecode = True  # keep the source tree clean
import make_tinydense  # noqa: E402  (the example's generator and reference)

CMAKE = os.environ["CMAKE_COMMAND"]
GENERATOR = os.environ.get("CMAKE_GENERATOR", "Ninja")
CXX = os.environ["CXX_COMPILER"]
STEPS = 4  # generated tokens compared: the prefill's, then the decode steps'


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    return p.returncode == 0


def build_plugin(d):
    """The example against the installed SDK only; returns its folder."""
    prefix, build = os.path.join(d, "prefix"), os.path.join(d, "build")
    plugins = os.path.join(d, "plugins")
    os.mkdir(plugins)
    if not (run(CMAKE, "--install", BUILD, "--prefix", prefix, "--component", "sdk")
            and run(CMAKE, "-S", EXAMPLE, "-B", build, "-G", GENERATOR, "-DCMAKE_PREFIX_PATH=" + prefix,
                    "-DCMAKE_CXX_COMPILER=" + CXX, "-DCMAKE_BUILD_TYPE=Release")
            and run(CMAKE, "--build", build)):
        return None
    for lib in glob.glob(os.path.join(build, "*.so")):
        shutil.copy(lib, plugins)
    return plugins


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seat_toml(model, plugins, port):
    return f"""[seat]
name = "tinydense"
served_model_names = ["tinydense"]
[server]
host = "127.0.0.1"
port = {port}
[model]
path = "{model}"
architecture = "tinydense"
max_model_len = 256
[kernels]
provider = "cpu"
[cache]
kv_cache_dtype = "fp32"
block_size = 16
[scheduler]
max_num_seqs = 4
max_num_batched_tokens = 64
[plugins]
search_paths = ["{plugins}", "{PLUGINS}"]
"""


def char_of(token_id):
    """The text of a single-character token (after the byte-fallback ids), else None."""
    vocab = make_tinydense.vocabulary()
    first = len(make_tinydense.SPECIALS) + 256
    return vocab[token_id].replace("\u2581", " ") if token_id >= first else None


def greedy(model, ids, steps):
    """The reference's greedy continuation: [(token id, its logprob, margin to the runner-up)]."""
    out = []
    for _ in range(steps):
        lsm = make_tinydense.log_softmax(make_tinydense.last_logits(model, ids + [t for t, _, _ in out]))
        order = sorted(range(len(lsm)), key=lambda i: -lsm[i])
        out.append((order[0], lsm[order[0]], lsm[order[0]] - lsm[order[1]]))
    return out


def pick_prompts(model, count, steps):
    """Prompts whose greedy continuation starts with a character token and
    keeps a clear margin at every step, so the comparison does not hinge on
    float rounding or on how byte tokens print."""
    chosen, candidate = [], 0
    first = len(make_tinydense.SPECIALS) + 256
    while len(chosen) < count and candidate < 200:
        candidate += 1
        length = 3 + candidate % 7
        ids = [first + (candidate * 7 + 13 * i * i) % len(make_tinydense.CHARS) for i in range(length)]
        want = greedy(model, ids, steps)
        if char_of(want[0][0]) is not None and min(m for _, _, m in want) > 0.02:
            chosen.append((ids, want))
    return chosen


def http(url, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, json.loads(r.read() or b"null")


def serve_and_compare(seat, port, prompts, log_path):
    base = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        proc = subprocess.Popen([os.environ["SEATRT_BIN"], "serve", seat], stdout=log, stderr=subprocess.STDOUT)
    try:
        healthy, deadline = False, time.time() + 90
        while not healthy and time.time() < deadline and proc.poll() is None:
            try:
                healthy = http(base + "/health", timeout=5)[0] == 200
            except OSError:
                time.sleep(0.2)
        check(healthy, "serve became healthy: " + open(log_path).read()[-3000:])
        if not healthy:
            return
        # One request, several prompts: a batched prefill, then decode steps.
        status, reply = http(base + "/v1/completions", {"model": "tinydense", "prompt": [p[0] for p in prompts],
                                                        "max_tokens": STEPS, "temperature": 0, "logprobs": 1})
        check(status == 200 and len(reply["choices"]) == len(prompts), f"completion reply: {reply}")
        for choice in sorted(reply["choices"], key=lambda c: c["index"]):
            ids, want = prompts[choice["index"]]
            lp = choice["logprobs"]
            check(len(lp["tokens"]) == len(want) and choice["text"] != "",
                  f"prompt {choice['index']}: a completion of {len(want)} tokens: {choice}")
            for step, ((want_id, want_lp, _), token, got) in enumerate(zip(want, lp["tokens"], lp["token_logprobs"])):
                if char_of(want_id) is not None:
                    check(token == char_of(want_id),
                          f"prompt {ids} step {step}: token {token!r}, the Python forward says {char_of(want_id)!r}")
                check(got is not None and math.isclose(got, want_lp, abs_tol=2e-3),
                      f"prompt {ids} step {step}: logprob {got}, the Python forward says {want_lp:.6f}")
        check(http(base + "/health", timeout=5)[0] == 200, "still healthy after the completion")
        check(proc.poll() is None, "serve still running")
    finally:
        proc.terminate()
        proc.wait(30)


with tempdir() as d:
    plugins = build_plugin(d)
    model = os.path.join(d, "model")
    make_tinydense.write_checkpoint(model, seed=1)
    if plugins:
        port = free_port()
        seat = write_seat(d, "seat.toml", seat_toml(model, plugins, port))
        rc, out, err = seatrt("check", seat)
        check(rc == 0, f"check loads the tinydense seat: rc {rc}\n{out}\n{err}")
        check("tinydense" in out and "checks out" in out, f"check reports the architecture: {out}")
        check("graph decode seqs=1" in out and "stages: embedding 1, layer 0 16" in out,
              f"check reports the step graphs (describe_steps): {out}")
        prompts = pick_prompts(model, 3, STEPS)
        check(len(prompts) == 3, "found prompts with a clear greedy margin")
        serve_and_compare(seat, port, prompts, os.path.join(d, "serve.log"))
finish()
