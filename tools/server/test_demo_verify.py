"""`seatrt verify` passes on the demo seat (configs/demo.toml: the tiny
Gemma-4 fixture model on the CPU provider), served from the seat file itself
with only its port, plugin path and file paths rewritten for the test.

The demo model has random weights, so it never chooses a tool by itself:
the auto tool-call check runs with --allow-prose-tool-answer (a clean prose
answer is a warning there, leaked markup or a broken call still fails),
while the forced tool call must parse and match the schema."""

import os
import subprocess
import unittest

from seat_harness import API_KEY, DemoSeat, build_dir


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
