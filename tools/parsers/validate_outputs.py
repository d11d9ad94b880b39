#!/usr/bin/env python3
"""Second, independent check of the constrained-decoding tests: runs the C++
test binary's [constrained] tests (which dump every generated value with its
schema to constrained_outputs.jsonl) and validates each value with Python's
jsonschema package.  Exit 0 only if all of them validate (and there are at
least 1000 per schema).

Usage: validate_outputs.py TEST_BINARY WORK_DIR
"""
import collections
import json
import os
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (pip install jsonschema): skipped")
    sys.exit(77)  # CTest SKIP_RETURN_CODE


def main():
    binary, dump_dir = sys.argv[1], sys.argv[2]
    os.makedirs(dump_dir, exist_ok=True)
    path = os.path.join(dump_dir, "constrained_outputs.jsonl")
    if os.path.exists(path):
        os.remove(path)
    env = dict(os.environ, SEATRT_PARSERS_DUMP=path)
    subprocess.run([binary, "[constrained]"], check=True, stdout=subprocess.DEVNULL, env=env)
    counts = collections.Counter()
    validators = {}
    bad = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            key = json.dumps(row["schema"], sort_keys=True)
            counts[key] += 1
            if key not in validators:
                cls = jsonschema.validators.validator_for(row["schema"])
                cls.check_schema(row["schema"])
                validators[key] = cls(row["schema"])
            for e in validators[key].iter_errors(row["value"]):
                bad += 1
                print("INVALID:", json.dumps(row["value"], ensure_ascii=False), "--", e.message)
    for key, n in counts.items():
        print("%6d values for schema %s" % (n, key[:100]))
    if bad or not counts or min(counts.values()) < 1000:
        print("FAILED: %d invalid values" % bad)
        return 1
    print("all %d values validate" % sum(counts.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
