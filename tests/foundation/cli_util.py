"""Helpers for the foundation tests that drive the real `seatrt` binary.

Paths come from the environment CTest sets (tests/foundation/CMakeLists.txt).
"""
import os
import subprocess
import sys
import tempfile

SEATRT = os.environ["SEATRT_BIN"]
BUILD = os.environ["SEATRT_BUILD_DIR"]
SOURCE = os.environ["SEATRT_SOURCE_DIR"]
TEST_PLUGINS = os.environ["SEATRT_TEST_PLUGIN_DIR"]
EXAMPLES = os.environ["SEATRT_EXAMPLES_DIR"]
PLUGINS = os.path.join(BUILD, "plugins")
# A real (tiny) checkpoint, so that check's model step has something to read.
MODEL = os.path.join(SOURCE, "tests", "fixtures", "gemma4-tiny-moe")
TOKENIZER = os.path.join(SOURCE, "tests", "fixtures", "tokenizer", "tokenizer.json")
TEMPLATE = os.path.join(SOURCE, "tests", "fixtures", "templates", "gemma4_chat_template.jinja")


def _abi_version():
    # The version the host and the examples are built with, as `seatrt
    # check` prints it ("ABI 1.5"): read from the SDK header, so a minor
    # release does not need these tests edited.
    text = open(os.path.join(SOURCE, "sdk", "include", "seatrt", "abi.h")).read()
    major = text.split("#define SEATRT_ABI_MAJOR ")[1].split()[0]
    minor = text.split("#define SEATRT_ABI_MINOR ")[1].split()[0]
    return f"ABI {major}.{minor}"


ABI = _abi_version()

failures = []


def check(condition, what):
    """Records a failed expectation (the test goes on, to report them all)."""
    if not condition:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def finish():
    if failures:
        print(f"{len(failures)} expectation(s) failed", file=sys.stderr)
        sys.exit(1)
    print("all expectations met")


def seatrt(*args, env=None, unset=()):
    """Runs seatrt; returns (exit code, stdout, stderr)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    for name in unset:
        full_env.pop(name, None)
    p = subprocess.run([SEATRT, *args], capture_output=True, text=True, env=full_env, timeout=120)
    return p.returncode, p.stdout, p.stderr


def write_seat(directory, name, body):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(body)
    return path


def seat_text(provider="example-cpu", fallback="cpu", tool="", reasoning="", extra="",
              search_paths=None):
    """A seat naming the given plugins, serving the tiny fixture model."""
    paths = search_paths if search_paths is not None else [PLUGINS, EXAMPLES]
    quoted = ", ".join('"%s"' % p for p in paths)
    return f"""[seat]
name = "test"
[model]
path = "{MODEL}"
tokenizer = "{TOKENIZER}"
chat_template = "{TEMPLATE}"
[kernels]
provider = "{provider}"
fallback = "{fallback}"
[parsers]
tool = "{tool}"
reasoning = "{reasoning}"
[plugins]
search_paths = [{quoted}]
{extra}
"""


def tempdir():
    return tempfile.TemporaryDirectory(prefix="seatrt-cli-")
