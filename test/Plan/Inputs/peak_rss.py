#!/usr/bin/env python3
"""Runs a command and checks its peak resident memory (getrusage of the child): fails, saying
both numbers, when it reaches LIMIT bytes, or when the command fails.

    peak_rss.py --limit BYTES [--limit-fraction F --of-json FILE KEY] -- command args...

--of-json reads KEY from the JSON object in FILE (e.g. the weight bytes the generator printed)
and the limit is F times it.
"""
import argparse
import json
import resource
import subprocess
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--limit", type=float, default=0)
    p.add_argument("--fraction", type=float, default=1.0)
    p.add_argument("--of-json", nargs=2, metavar=("FILE", "KEY"))
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command and a.command[0] == "--" else a.command
    limit = a.limit
    if a.of_json:
        with open(a.of_json[0]) as f:
            limit = json.loads(f.read().strip().splitlines()[-1])[a.of_json[1]]
    limit *= a.fraction
    rc = subprocess.call(cmd)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(f"peak RSS {peak / 1e9:.3f} GB, limit {limit / 1e9:.3f} GB")
    if rc != 0:
        print(f"the command failed with exit status {rc}", file=sys.stderr)
        return 1
    if peak >= limit:
        print(f"peak RSS {peak / 1e9:.3f} GB is not below the limit {limit / 1e9:.3f} GB",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
