"""Checks the table of `accelc -print-memory-plan` (docs/passes/layout.md).

Usage: check_memory_plan.py <table.txt>

Reads the rows (value, op, bytes, offset, live first..last, buffer,
location) and the last line "peak P bytes, naive N bytes (Rx)", and checks,
from the table alone:
  - every offset is a multiple of 256;
  - a view (buffer != value) has its buffer's offset and bytes, and lives
    within its buffer's live range;
  - no two buffers whose live ranges overlap share a byte (each takes its
    bytes rounded up to 256);
  - naive is the sum of the buffers' aligned bytes, and peak <= naive;
  - every buffer ends within the arena (offset + aligned bytes <= peak);
  - peak >= the largest sum of aligned bytes of the buffers live at one
    op index (a lower bound no placement can beat).
Prints one "ok" line with the numbers, or "FAIL: <why>" and exits 1.
"""
import re
import sys

ALIGN = 256


def aligned(n):
    return (n + ALIGN - 1) // ALIGN * ALIGN


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    lines = open(sys.argv[1]).read().splitlines()
    rows = {}
    peak = naive = None
    for line in lines:
        m = re.fullmatch(r"peak (\d+) bytes, naive (\d+) bytes \(([0-9.]+)x\)", line)
        if m:
            peak, naive = int(m.group(1)), int(m.group(2))
            continue
        if line.startswith("memory plan of ") or line.startswith("value "):
            continue
        parts = line.split(None, 6)
        if len(parts) < 6:
            fail("cannot read the row '%s'" % line)
        value, op, nbytes, offset, live, buffer = parts[:6]
        first, last = (int(x) for x in live.split(".."))
        if value in rows:
            fail("%s is listed twice" % value)
        rows[value] = dict(op=op, bytes=int(nbytes), offset=int(offset), first=first,
                           last=last, buffer=buffer)
    if peak is None:
        fail("no 'peak ... naive ...' line")
    if not lines[-1].startswith("peak "):
        fail("the last line is not the peak line")
    if not rows:
        fail("no planned values")

    buffers = {v: r for v, r in rows.items() if r["buffer"] == v}
    views = {v: r for v, r in rows.items() if r["buffer"] != v}
    for v, r in rows.items():
        if r["offset"] % ALIGN:
            fail("%s is at offset %d, not a multiple of %d" % (v, r["offset"], ALIGN))
        if r["first"] > r["last"]:
            fail("%s has an empty live range" % v)
    for v, r in views.items():
        b = buffers.get(r["buffer"])
        if b is None:
            fail("%s is a view of %s, which is not a buffer" % (v, r["buffer"]))
        if (r["offset"], r["bytes"]) != (b["offset"], b["bytes"]):
            fail("%s does not have the offset and bytes of its buffer %s" % (v, r["buffer"]))
        if r["first"] < b["first"] or r["last"] > b["last"]:
            fail("%s outlives its buffer %s" % (v, r["buffer"]))

    items = sorted(buffers.items(), key=lambda kv: kv[1]["first"])
    for i, (a, ra) in enumerate(items):
        for b, rb in items[i + 1:]:
            if rb["first"] > ra["last"]:
                break
            lo = max(ra["offset"], rb["offset"])
            hi = min(ra["offset"] + aligned(ra["bytes"]), rb["offset"] + aligned(rb["bytes"]))
            if lo < hi:
                fail("%s and %s are live together and share bytes [%d, %d)" % (a, b, lo, hi))

    total = sum(aligned(r["bytes"]) for r in buffers.values())
    if total != naive:
        fail("naive is %d but the buffers sum to %d" % (naive, total))
    if peak > naive:
        fail("peak %d exceeds naive %d" % (peak, naive))
    for v, r in buffers.items():
        if r["offset"] + aligned(r["bytes"]) > peak:
            fail("%s ends at %d, past the arena of %d" % (v, r["offset"] + aligned(r["bytes"]), peak))
    events = sorted({r["first"] for r in buffers.values()})
    bound = max(sum(aligned(r["bytes"]) for r in buffers.values() if r["first"] <= t <= r["last"])
                for t in events)
    if peak < bound:
        fail("peak %d is below the %d bytes live at once" % (peak, bound))
    print("ok: %d values (%d views), peak %d <= naive %d, peak >= live-set bound %d"
          % (len(rows), len(views), peak, naive, bound))


main()
