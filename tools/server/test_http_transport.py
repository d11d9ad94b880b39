"""The HTTP transport's limits and the requests it answers itself (found by a
robustness sweep of the demo seat): a request Beast cannot read whole gets a
status before the close (431 headers too large, 413 body too large, 400 not
HTTP), HEAD gets headers only, "Expect: 100-continue" is answered at once, a
silent connection is closed after server.idle_timeout_s, and one connection
past server.max_connections gets 503 while the open ones keep working (so
thousands of idle clients cannot make the server unreachable).  Raw sockets:
the point is what goes over the wire.
Run: python3 test_http_transport.py (SEATRT_BUILD_DIR names the build tree)."""

import json
import socket
import time
import unittest

from seat_harness import API_KEY, Seat

MAX_CONNECTIONS = 4
IDLE_TIMEOUT_S = 1.0


def exchange(port, data, wait=60.0):
    """Sends `data` on a new connection; returns every byte until the server
    closes or `wait` seconds pass without one (a stuck server, not a slow one:
    every exchange here ends with the server closing)."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(data)
        s.settimeout(wait)
        out = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                out += chunk
        except socket.timeout:
            pass
        return out


def status_of(response):
    return int(response.split(b" ", 2)[1]) if response.startswith(b"HTTP/1.1 ") else None


class HttpTransportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.seat = Seat(server_extra=f"max_connections = {MAX_CONNECTIONS}\nidle_timeout_s = {IDLE_TIMEOUT_S}").start()

    @classmethod
    def tearDownClass(cls):
        code = cls.seat.stop()
        cls.seat.log.close()
        assert code == 0, "seatrt serve exited %s after SIGTERM" % code

    def assert_alive(self):
        self.assertIsNone(self.seat.proc.poll(), self.seat.read_log())
        status, text, _ = self.seat.post("/v1/completions", {"model": "scripted", "prompt": "hi", "max_tokens": 2})
        self.assertEqual(status, 200, text)

    def assert_error(self, response, status, contains):
        self.assertEqual(status_of(response), status, response[:200])
        body = response.split(b"\r\n\r\n", 1)[1]
        error = json.loads(body)["error"]
        self.assertIn(contains, error["message"])
        # One error shape for the transport's answers and the API's.
        self.assertEqual(sorted(error), ["code", "message", "param", "type"])
        self.assertEqual(error["code"], status)

    def test_unreadable_requests_get_a_status_before_the_close(self):
        port = self.seat.port
        big_header = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 10000 + b"\r\n\r\n"
        self.assert_error(exchange(port, big_header), 431, "headers exceed")
        many_headers = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(
            b"X-H%d: v\r\n" % i for i in range(1000)) + b"\r\n"
        self.assert_error(exchange(port, many_headers), 431, "headers exceed")
        too_long = b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 70000000\r\n\r\n"
        self.assert_error(exchange(port, too_long), 413, "body exceeds")
        for garbage in (b"GARBAGE\r\n\r\n", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                        b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                        b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n"):
            self.assert_error(exchange(port, garbage), 400, "not valid HTTP")
        self.assert_alive()

    def test_head_gets_headers_only(self):
        response = exchange(self.seat.port, b"HEAD /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        head, _, body = response.partition(b"\r\n\r\n")
        self.assertEqual(status_of(response), 200, response)
        self.assertEqual(body, b"")  # the GET body would be {"status":"ok"}
        self.assertIn(b"Content-Length: ", head)

    def test_expect_100_continue_is_answered_at_once(self):
        body = json.dumps({"model": "scripted", "prompt": "hi", "max_tokens": 2}).encode()
        with socket.create_connection(("127.0.0.1", self.seat.port)) as s:
            s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Authorization: Bearer " + API_KEY.encode() + b"\r\nExpect: 100-continue\r\n"
                      b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(body))
            # No body is sent before the 100: any answer at all proves it came at once.
            s.settimeout(60)
            self.assertEqual(s.recv(64), b"HTTP/1.1 100 Continue\r\n\r\n")
            s.sendall(body)
            s.settimeout(60)
            response = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                response += chunk
        self.assertEqual(status_of(response), 200, response[:300])

    def test_a_silent_connection_is_closed_after_the_idle_timeout(self):
        with socket.create_connection(("127.0.0.1", self.seat.port)) as s:
            s.settimeout(60)
            start = time.monotonic()
            self.assertEqual(s.recv(16), b"")  # closed, nothing sent (a timeout here: never closed)
            waited = time.monotonic() - start
        self.assertGreaterEqual(waited, 0.8 * IDLE_TIMEOUT_S)

    def test_connections_past_the_limit_get_503_and_the_open_ones_go_on(self):
        idle = [socket.create_connection(("127.0.0.1", self.seat.port)) for _ in range(MAX_CONNECTIONS)]
        try:
            # Once the server has accepted and counted them, the next one is
            # refused; until then it may still be served (and closed).
            deadline = time.monotonic() + 60
            while True:
                refused = exchange(self.seat.port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if status_of(refused) != 200 or time.monotonic() > deadline:
                    break
            self.assert_error(refused, 503, "too many open connections")
            self.assertIn(b"\r\nRetry-After: 1\r\n", refused)
            # An open connection still gets its answer.
            idle[0].sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            idle[0].settimeout(60)
            self.assertEqual(status_of(idle[0].recv(4096)), 200)
        finally:
            for s in idle:
                s.close()
        # Once they close (or time out idle), new connections are served.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if status_of(exchange(self.seat.port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                                  )) == 200:
                break
            time.sleep(0.2)
        else:
            self.fail("connections were still refused after the idle ones closed")
        self.assertIn("server.max_connections", self.seat.read_log())

    def test_a_trickling_request_is_dropped(self):
        # A byte at a time, each within the idle timeout (slowloris): the
        # request's clock (grace + 1 s per 500 bytes) ends it.
        start = time.monotonic()
        closed_after = None
        with socket.create_connection(("127.0.0.1", self.seat.port)) as s:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: ")
            s.settimeout(0.5 * IDLE_TIMEOUT_S)
            while time.monotonic() - start < 60:
                try:
                    s.sendall(b"a")
                    if s.recv(1024) == b"":
                        closed_after = time.monotonic() - start
                        break
                except socket.timeout:
                    continue
                except OSError:
                    closed_after = time.monotonic() - start
                    break
        self.assertIsNotNone(closed_after, "a request trickled for 60 s without being dropped")
        self.assert_alive()

    def test_http10_gets_an_unframed_stream_ended_by_the_close(self):
        body = json.dumps({"model": "scripted", "prompt": "hi", "max_tokens": 3, "stream": True}).encode()
        response = exchange(self.seat.port, b"POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\n"
                            b"Authorization: Bearer " + API_KEY.encode() + b"\r\nExpect: 100-continue\r\n"
                            b"Content-Length: %d\r\n\r\n" % len(body) + body)
        head, _, stream = response.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.0 200"), head)  # no 100 Continue to an HTTP/1.0 client
        self.assertNotIn(b"transfer-encoding", head.lower())
        self.assertTrue(stream.startswith(b"data: {"), stream[:40])
        self.assertTrue(stream.endswith(b"data: [DONE]\n\n"), stream[-40:])

    def test_request_line_and_headers_as_rfc_9110_and_9112_ask(self):
        port = self.seat.port
        auth = b"Authorization: Bearer " + API_KEY.encode() + b"\r\n"
        self.assert_error(exchange(port, b"GET /health HTTP/1.1\r\nConnection: close\r\n\r\n"), 400, "Host")
        r = exchange(port, b"GET http://seat.example/health?x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assertEqual(status_of(r), 200, r)
        self.assertRegex(r.split(b"\r\n\r\n")[0], rb"\r\nDate: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT")
        r = exchange(port, b"HEAD /v1/models HTTP/1.1\r\nHost: x\r\n" + auth + b"Connection: close\r\n\r\n")
        self.assertEqual((status_of(r), r.partition(b"\r\n\r\n")[2]), (200, b""))
        r = exchange(port, b"DELETE /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assert_error(r, 405, "accepts GET")
        self.assertIn(b"\r\nAllow: GET, HEAD\r\n", r)
        r = exchange(port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        self.assert_error(r, 401, "API key")
        self.assertIn(b"\r\nWWW-Authenticate: Bearer\r\n", r)
        r = exchange(port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: bearer " + API_KEY.encode() +
                     b"\r\nConnection: close\r\n\r\n")
        self.assertEqual(status_of(r), 200, r)  # the scheme is case-insensitive
        r = exchange(port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer   " + API_KEY.encode() +
                     b"\r\nConnection: close\r\n\r\n")
        self.assertEqual(status_of(r), 200, r)  # and followed by one or more spaces
        # One Host, and one host in it.
        for hosts in (b"Host: a\r\nHOST: b\r\n", b"Host: a b\r\n", b"Host: a, b\r\n"):
            self.assert_error(exchange(port, b"GET /health HTTP/1.1\r\n" + hosts + b"\r\n"), 400, "Host")
        # An error answered to HEAD has no body either.
        r = exchange(port, b"HEAD /health HTTP/1.1\r\nConnection: close\r\n\r\n")
        self.assertEqual((status_of(r), r.partition(b"\r\n\r\n")[2]), (400, b""))

    def test_a_body_of_unknown_length_is_refused_not_read_as_a_request(self):
        # Transfer-Encoding not ending in chunked: the body's end is unknown
        # (RFC 9112 6.3); reading on would take the body for a request.
        smuggled = (b"POST /tokenize HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n"
                    b"GET /v1/nosuch HTTP/1.1\r\nHost: a\r\n\r\n")
        r = exchange(self.seat.port, smuggled)
        self.assert_error(r, 400, "Transfer-Encoding")
        self.assertEqual(r.count(b"HTTP/1.1 "), 1, r)  # one answer, then the close
        r = exchange(self.seat.port, b"POST /tokenize HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                     b"0\r\n\r\n")
        self.assert_error(r, 501, "gzip")


if __name__ == "__main__":
    unittest.main(verbosity=2)
