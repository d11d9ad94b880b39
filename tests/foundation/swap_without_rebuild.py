#!/usr/bin/env python3
"""Swapping plugins without rebuilding the host: `seatrt check` on a seat
naming kernel provider A and tool parser P1, then on the same seat file
edited to name provider B and parser P2.  The seatrt binary's SHA-256 must
not change; the behaviour (which provider ran rms_norm, what the parser
made of the same text) must."""
import hashlib
import re

from cli_util import (EXAMPLES, PLUGINS, SEATRT, TEST_PLUGINS, check, finish, seat_text, seatrt,
                      tempdir, write_seat)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def behaviour(out):
    kernel = re.search(r"^kernel smoke: (.*)$", out, re.M)
    parser = re.search(r"^tool parser smoke: (.*)$", out, re.M)
    return (kernel.group(1) if kernel else None, parser.group(1) if parser else None)


paths = [PLUGINS, EXAMPLES, TEST_PLUGINS]
before = sha256(SEATRT)
with tempdir() as d:
    seat = write_seat(d, "seat.toml", seat_text(provider="example-cpu", tool="example-call",
                                                search_paths=paths))
    rc, out_a, err = seatrt("check", seat)
    check(rc == 0, f"seat A: rc {rc}, {err!r}")
    kernel_a, parser_a = behaviour(out_a)
    print("A:", kernel_a, "|", parser_a)

    # Edit the seat file: provider B, parser P2.  Nothing is rebuilt.
    with open(seat) as f:
        text = f.read()
    text = text.replace('provider = "example-cpu"', 'provider = "cpu"')
    text = text.replace('tool = "example-call"', 'tool = "test-shout"')
    with open(seat, "w") as f:
        f.write(text)
    rc, out_b, err = seatrt("check", seat)
    check(rc == 0, f"seat B: rc {rc}, {err!r}")
    kernel_b, parser_b = behaviour(out_b)
    print("B:", kernel_b, "|", parser_b)
after = sha256(SEATRT)

check(before == after, f"the seatrt binary changed: {before} -> {after}")
check(kernel_a is not None and kernel_a.startswith("rms_norm via example-cpu -> "), f"A kernel: {kernel_a}")
check(kernel_b is not None and kernel_b.startswith("rms_norm via cpu -> "), f"B kernel: {kernel_b}")
# Same numbers from two independent implementations of rms_norm.
check(kernel_a and kernel_b and kernel_a.split("->")[1] == kernel_b.split("->")[1],
      "both providers agree on rms_norm")
check(parser_a is not None and "tool_call[0]=get_weather(" in parser_a and "finish=tool_calls" in parser_a,
      f"P1 made the tool call: {parser_a}")
check(parser_b is not None and "tool_call" not in parser_b and "CALL GET_WEATHER" in parser_b,
      f"P2 made none and shouted: {parser_b}")
check("tool parser: example-call" in out_a and "tool parser: test-shout" in out_b, "parser lines")
check("kernel provider: example-cpu" in out_a and "kernel provider: cpu" in out_b, "provider lines")
finish()
