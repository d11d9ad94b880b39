#!/usr/bin/env python3
"""`seatrt check` on valid seats: what it prints (plugins with file, name,
version, ABI; the probe scores of "auto"; which ops come from which
provider; the model's step graphs and who runs their nodes), JSON logging,
`seatrt plugins`, and the `serve` stand-in."""
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
    check(" run=example-cpu+cpu" in out and " alloc=example-cpu" in out, "slots by provider: " + out)
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

    # The model's step graphs (the architecture's describe_steps): a decode
    # graph, its nodes, and the provider running them.
    f = write_seat(d, "steps.toml", seat_text(provider="cpu", fallback="none", search_paths=[PLUGINS]))
    rc, out, err = seatrt("check", f)
    check(rc == 0, f"check steps: rc {rc}, stderr {err!r}")
    check("\nmodel steps (max_seqs " in out, "model steps heading: " + out)
    steps = out.split("\nmodel steps (max_seqs ", 1)[-1].split("\nok: ", 1)[0].splitlines()[1:]
    graphs = [l for l in steps if l.startswith("  graph")]
    check(any("decode" in l for l in graphs), "a decode graph heading: " + "\n".join(steps))
    check(any(l.startswith("    ") and "cpu" in l for l in steps), "node lines naming the provider cpu: " +
          "\n".join(steps))

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
