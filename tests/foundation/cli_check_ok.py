#!/usr/bin/env python3
"""`seatrt check` on valid seats: what it prints (plugins with file, name,
version, ABI; the probe scores of "auto"; which ops come from which
provider), JSON logging, `seatrt plugins`, and the `serve` stand-in."""
import json
import os

from cli_util import (ABI, EXAMPLES, PLUGINS, TEST_PLUGINS, check, finish, seat_text, seatrt,
                      tempdir, write_seat)

with tempdir() as d:
    # Named provider, fallback for the ops it leaves NULL.
    f = write_seat(d, "named.toml", seat_text(provider="example-cpu", tool="example-call"))
    rc, out, err = seatrt("check", f)
    check(rc == 0, f"check named: rc {rc}, stderr {err!r}")
    check(f"kernel provider: example-cpu 0.1.0 ({ABI}) " in out, "provider line: " + out)
    check("libseatrt_example_kernels.so" in out, "provider file shown")
    check("kernel fallback: cpu " in out, "fallback line")
    check(" rms_norm=example-cpu" in out and " linear=cpu" in out, "ops by provider: " + out)
    check(f"tool parser: example-call 0.1.0 ({ABI})" in out, "parser line")
    check("\nmodel: " in out, "model line: " + out)
    check("tokenizer: " in out and " tokens)" in out, "tokenizer line: " + out)
    check("chat template: " in out, "chat template line")
    check(out.rstrip().endswith("ok: seat 'test' checks out"), "ok line")

    # auto: every provider probed, scores printed, the best one chosen.
    f = write_seat(d, "auto.toml", seat_text(provider="auto", search_paths=[PLUGINS]))
    rc, out, err = seatrt("check", f)
    check(rc == 0, f"check auto: rc {rc}, stderr {err!r}")
    check("kernel provider auto-selection (probe scores):" in out, "auto section: " + out)
    check("  cpu: score 1 (" in out, "cpu's score listed")

    # JSON logs: every stderr line is a JSON object with time, level, msg.
    f = write_seat(d, "json.toml", seat_text(provider="cpu", fallback="none", search_paths=[PLUGINS]))
    rc, out, err = seatrt("check", f, "--log-format", "json", "--log-level", "debug")
    check(rc == 0, f"check json: rc {rc}, {err!r}")
    lines = [l for l in err.splitlines() if l.strip()]
    for line in lines:
        try:
            obj = json.loads(line)
            check({"time", "level", "msg"} <= obj.keys(), "json log keys: " + line)
        except ValueError:
            check(False, "stderr line is not JSON: " + line)

    # seatrt plugins: file, kinds, name, version, ABI, probe score.
    rc, out, err = seatrt("plugins", "--path", EXAMPLES, "--path", TEST_PLUGINS)
    check(rc == 0, f"plugins: rc {rc}, {err!r}")
    check(f"name: example-cpu  version: 0.1.0  ABI: {ABI[4:]}" in out, "plugins lists example-cpu")
    check("kinds: kernel provider" in out and "probe: score 1 (" in out, "plugins shows probe")
    check("libtest_other_major.so\n  error: " in out, "plugins lists the unusable ones with the reason")

finish()
