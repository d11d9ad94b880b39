"""`seatrt verify` passes on the demo seat (configs/demo.toml: the tiny
Gemma-4 fixture model on the CPU provider), served from the seat file itself
with only its port, plugin path and file paths rewritten for the test.

The demo model has random weights, so it never chooses a tool by itself:
the auto tool-call check runs with --allow-prose-tool-answer (a clean prose
answer is a warning there, leaked markup or a broken call still fails),
while the forced tool call must parse and match the schema."""

import os
import re
import subprocess
import tempfile
import unittest

from seat_harness import API_KEY, ROOT, Seat, build_dir, free_port


class DemoSeat(Seat):
    def __init__(self):
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
        self.seat_file = os.path.join(self.tmp.name, "demo.toml")
        with open(self.seat_file, "w") as f:
            f.write(seat)
        self.log_path = os.path.join(self.tmp.name, "server.log")
        self.proc = None


class DemoVerifyTest(unittest.TestCase):
    def test_verify_passes_on_the_demo_seat(self):
        with DemoSeat() as seat:
            env = dict(os.environ, SEATRT_API_KEY=API_KEY)
            r = subprocess.run([os.path.join(build_dir(), "bin", "seatrt"), "verify", seat.base_url, "demo",
                                "--allow-prose-tool-answer"],
                               capture_output=True, text=True, env=env, timeout=240)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr + seat.read_log())
            self.assertIn("PASS tool-call-forced", r.stdout)
            self.assertIn("PASS finite-logprobs", r.stdout)
            self.assertIn("all checks passed", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
