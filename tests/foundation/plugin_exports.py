#!/usr/bin/env python3
"""Every plugin library the build makes exports exactly one dynamic symbol,
seatrt_plugin_init.  Globs every .so, so plugins added later are covered;
the deliberately broken test libraries (libbroken_*) are skipped."""
import glob
import os
import subprocess

from cli_util import BUILD, EXAMPLES, TEST_PLUGINS, check, finish

libraries = []
for directory in (os.path.join(BUILD, "plugins"), EXAMPLES, TEST_PLUGINS):
    libraries += [p for p in glob.glob(os.path.join(directory, "*.so"))
                  if not os.path.basename(p).startswith("libbroken_")]
check(len(libraries) >= 5, f"expected the build's plugins, found {libraries}")
for lib in sorted(libraries):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    symbols = [line.split()[-1] for line in out.splitlines() if line.strip()]
    check(symbols == ["seatrt_plugin_init"], f"{lib} exports {symbols}")
    print(os.path.basename(lib), symbols)
finish()
