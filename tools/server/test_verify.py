"""`seatrt verify` passes on a healthy seat and fails, naming the checks,
on a seat whose model produces NaN; its leak check tells a leaked control
token from ordinary tokens that spell one (a scripted fake server)."""

import http.server
import json
import os
import subprocess
import threading
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


class FakeLeakServer(http.server.ThreadingHTTPServer):
    """Answers every chat with content "Sea <channel|> air" whose logprobs
    list the sampled tokens by id: either the control token (id 101, as
    /tokenize says for "<channel|>") or ordinary pieces spelling it."""

    def __init__(self, control):
        spelled = [(101, b"<channel|>")] if control else [(900, b"<chan"), (901, b"nel|>")]
        pieces = [(7, b"Sea ")] + spelled + [(8, b" air")]
        self.logprobs = [{"token": f"token_id:{i}", "bytes": list(b), "logprob": -0.5, "top_logprobs": []}
                         for i, b in pieces]
        super().__init__(("127.0.0.1", 0), FakeLeakHandler)


class FakeLeakHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.reply({"data": [{"id": "fake", "max_model_len": 64}]} if self.path == "/v1/models" else {})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/tokenize":
            marks = {"<|channel>": 100, "<channel|>": 101, "<|turn>": 105, "<turn|>": 106, "<|tool_call>": 48}
            self.reply({"tokens": [marks[body["prompt"]]] if body["prompt"] in marks else [1, 2]})
            return
        lp = self.server.logprobs if body.get("return_tokens_as_token_ids") else None
        self.reply({"choices": [{"index": 0, "finish_reason": "stop", "logprobs": {"content": lp} if lp else None,
                                 "message": {"role": "assistant", "content": "Sea <channel|> air"}}]})


class VerifyLeakTest(unittest.TestCase):
    def run_against(self, control):
        server = FakeLeakServer(control)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            r = subprocess.run([os.path.join(build_dir(), "bin", "seatrt"), "verify",
                                f"http://127.0.0.1:{server.server_address[1]}", "fake"],
                               capture_output=True, text=True, timeout=60)
        finally:
            server.shutdown()
            server.server_close()
        return next(line for line in r.stdout.splitlines() if "plain-prose" in line)

    def test_a_control_token_in_content_is_a_leak(self):
        self.assertRegex(self.run_against(control=True), r"^FAIL plain-prose .*control token leaked: <channel\|>")

    def test_ordinary_tokens_spelling_a_control_token_are_text(self):
        self.assertRegex(self.run_against(control=False), r"^PASS plain-prose")


if __name__ == "__main__":
    unittest.main(verbosity=2)
