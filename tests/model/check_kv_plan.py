#!/usr/bin/env python3
"""`seatrt check` plans the KV pool as `seatrt serve` does (one code path,
server/seat_kv.cpp, fed by the architecture's describe() instead of the
loaded model): on the demo seat its "KV pool" line is the one serve logs at
load; a kv_cache_memory too small for one max_model_len sequence and a
max_model_len past the model's max_position fail check with serve's message
(they used to pass check and fail only at serve).
Usage: check_kv_plan.py SEATRT PLUGINS_DIR SOURCE_DIR OUT_DIR"""
import os
import re
import socket
import subprocess
import sys
import time

seatrt, plugins, source, out_dir = sys.argv[1:5]
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL:", what)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seat(name, **replace):
    with open(os.path.join(source, "configs", "demo.toml")) as f:
        text = f.read()
    text = text.replace("../build/plugins", plugins).replace('"../', '"' + source + "/")
    text = text.replace("port = 8000", "port = %d" % free_port())
    for old, new in replace.items():
        text = text.replace(old, new)
    path = os.path.join(out_dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def kv_line(text):
    m = re.search(r"KV pool [^\n]*", text)
    return m.group(0) if m else None


# The demo seat: check's plan equals the one serve logs.
demo = seat("kv_demo.toml")
r = subprocess.run([seatrt, "check", demo], capture_output=True, text=True, timeout=120)
check(r.returncode == 0, "check passes the demo seat: " + r.stderr)
planned = kv_line(r.stdout)
check(planned is not None, "check prints a KV pool line: " + r.stdout)
log_path = os.path.join(out_dir, "kv_demo_serve.log")
with open(log_path, "w") as log:
    proc = subprocess.Popen([seatrt, "serve", demo], stdout=log, stderr=subprocess.STDOUT)
    served = None
    deadline = time.time() + 60
    while time.time() < deadline and served is None and proc.poll() is None:
        time.sleep(0.1)
        with open(log_path) as f:
            served = kv_line(f.read())
    proc.terminate()
    proc.wait(30)
check(served is not None, "serve logs a KV pool line")
check(planned == served, f"check's plan {planned!r} equals serve's {served!r}")

# A pool too small for one max_model_len sequence.
small = seat("kv_small.toml", **{"kv_cache_max_context_multiple = 2.0": "kv_cache_memory = 40000"})
r = subprocess.run([seatrt, "check", small], capture_output=True, text=True, timeout=120)
check(r.returncode != 0, "check refuses a 40000-byte pool")
check("kv_cache_memory 40000 bytes is too small" in r.stderr and "needs at least" in r.stderr,
      "the refusal names the key and the bytes needed: " + r.stderr)
check("checks out" not in r.stdout, "no ok line after a refusal")

# The same pool sized by kv_cache_max_context_multiple: the refusal names that key.
fraction = seat("kv_fraction.toml", **{"kv_cache_max_context_multiple = 2.0": "kv_cache_max_context_multiple = 0.5"})
r = subprocess.run([seatrt, "check", fraction], capture_output=True, text=True, timeout=120)
check(r.returncode != 0, "check refuses a pool of half a max_model_len")
check("kv_cache_max_context_multiple = 0.5" in r.stderr, "the refusal names the key that sized the pool: " + r.stderr)

# max_model_len past the model's max_position_embeddings (4096).
long = seat("kv_long.toml", **{"max_model_len = 4096": "max_model_len = 100000"})
r = subprocess.run([seatrt, "check", long], capture_output=True, text=True, timeout=120)
check(r.returncode != 0, "check refuses max_model_len 100000")
check("max_model_len 100000 exceeds the model's max_position_embeddings 4096" in r.stderr,
      "the refusal names max_model_len: " + r.stderr)

if failures:
    sys.exit(1)
print("ok: check plans the KV pool as serve does")
