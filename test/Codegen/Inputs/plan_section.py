#!/usr/bin/env python3
"""Reads or damages one section of a plan, found by name in `accel-run --describe`.

usage: plan_section.py <describe.txt> <in.plan> <section name> extract <out>
       plan_section.py <describe.txt> <in.plan> <section name> flip <out.plan>

extract writes the section's bytes to <out>; flip writes a copy of the plan with
one byte in the middle of the section changed (its CRC left stale).
"""
import re
import sys


def main():
    describe, plan, name, mode, out = sys.argv[1:6]
    text = open(describe).read()
    m = re.search(r"^\s*\d+ " + re.escape(name) + r": \w+, offset (\d+), (\d+) bytes", text, re.M)
    if not m:
        sys.exit("no section '%s' in %s" % (name, describe))
    offset, size = int(m.group(1)), int(m.group(2))
    data = bytearray(open(plan, "rb").read())
    if mode == "extract":
        open(out, "wb").write(data[offset:offset + size])
    elif mode == "flip":
        data[offset + size // 2] ^= 0x5A
        open(out, "wb").write(data)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
