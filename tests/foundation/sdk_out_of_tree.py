#!/usr/bin/env python3
"""Third-party development: install the SDK to a prefix, build every
sdk/examples/* project out-of-tree with only find_package(seatrt-sdk)
against that prefix (01-03 always; 04-architecture too when the directory
exists), and have the host load the results."""
import glob
import json
import os
import shutil
import subprocess

from cli_util import ABI, BUILD, PLUGINS, SOURCE, check, finish, seat_text, seatrt, tempdir, write_seat

CMAKE = os.environ["CMAKE_COMMAND"]
GENERATOR = os.environ.get("CMAKE_GENERATOR", "Ninja")
CXX = os.environ["CXX_COMPILER"]


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    return p.returncode == 0


with tempdir() as d:
    prefix = os.path.join(d, "prefix")
    run(CMAKE, "--install", BUILD, "--prefix", prefix, "--component", "sdk")
    check(os.path.isfile(os.path.join(prefix, "include", "seatrt", "abi.h")), "headers installed")
    check(glob.glob(os.path.join(prefix, "lib*", "cmake", "seatrt-sdk", "seatrt-sdkConfig.cmake")),
          "package config installed")
    plugins = os.path.join(d, "plugins")
    os.mkdir(plugins)
    examples = sorted(glob.glob(os.path.join(SOURCE, "sdk", "examples", "0*")))
    names = [os.path.basename(e) for e in examples]
    check(names[:3] == ["01-minimal", "02-kernel-provider", "03-tool-parser"], f"examples found: {names}")
    if os.path.isdir(os.path.join(SOURCE, "sdk", "examples", "04-architecture")):
        check("04-architecture" in names, f"04-architecture built too: {names}")
    for example in examples:
        build = os.path.join(d, "build-" + os.path.basename(example))
        ok = run(CMAKE, "-S", example, "-B", build, "-G", GENERATOR, "-DCMAKE_PREFIX_PATH=" + prefix,
                 "-DCMAKE_CXX_COMPILER=" + CXX, "-DCMAKE_BUILD_TYPE=Release",
                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON") and run(CMAKE, "--build", build)
        if not ok:
            continue
        # It compiled against the installed headers, not the source tree's.
        with open(os.path.join(build, "compile_commands.json")) as f:
            commands = " ".join(c["command"] for c in json.load(f))
        check(os.path.join(prefix, "include") in commands, f"{example}: uses the prefix's headers")
        check(os.path.join(SOURCE, "sdk", "include") not in commands,
              f"{example}: must not use the source tree's headers")
        for lib in glob.glob(os.path.join(build, "*.so")):
            shutil.copy(lib, plugins)

    rc, out, err = seatrt("plugins", "--path", plugins)
    check(rc == 0 and "error:" not in out, f"plugins on the out-of-tree build: {rc} {out} {err}")
    for name in ("example-minimal", "example-cpu", "example-call"):
        check(f"name: {name} " in out, f"{name} listed: {out}")
    seat = write_seat(d, "seat.toml", seat_text(provider="example-cpu", tool="example-call",
                                                search_paths=[plugins, PLUGINS]))
    rc, out, err = seatrt("check", seat)
    check(rc == 0, f"check with out-of-tree plugins: rc {rc} {err!r}")
    check(f"kernel provider: example-cpu 0.1.0 ({ABI}) {plugins}/" in out, "provider from the prefix build")
    check(f"tool parser: example-call 0.1.0 ({ABI}) {plugins}/" in out, "parser from the prefix build")
    check("tool_call[0]=get_weather(" in out, "the out-of-tree parser ran")
finish()
