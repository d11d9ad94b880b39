"""`seatrt verify` passes on a healthy seat and fails, naming the checks,
on a seat whose model produces NaN."""

import os
import subprocess
import unittest

from seat_harness import API_KEY, Seat, build_dir


def verify(seat):
    env = dict(os.environ, SEATRT_API_KEY=API_KEY)
    return subprocess.run([os.path.join(build_dir(), "bin", "seatrt"), "verify", seat.base_url, "scripted"],
                          capture_output=True, text=True, env=env, timeout=120)


class VerifyTest(unittest.TestCase):
    def test_verify_passes_on_a_healthy_seat(self):
        with Seat() as seat:
            r = verify(seat)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            self.assertIn("all checks passed", r.stdout)
            self.assertIn("PASS tool-call-auto", r.stdout)
            self.assertIn("PASS tool-call-forced", r.stdout)

    def test_verify_fails_on_a_nan_seat(self):
        with Seat(nan=True) as seat:
            r = verify(seat)
            self.assertEqual(r.returncode, 1, r.stdout)
            self.assertIn("FAIL finite-logprobs", r.stdout)
            self.assertIn("FAIL ready", r.stdout)
            self.assertIn("verify: FAILED:", r.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
