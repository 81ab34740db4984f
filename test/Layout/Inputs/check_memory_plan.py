"""Checks the table of `accelc -print-memory-plan` (docs/passes/layout.md).

Usage: check_memory_plan.py <table.txt>

Reads the rows (buffer, region, offset, bytes per unit, live first..last
step, the op that writes it, location), the arena line ("arena: fixed F,
per token T, per sequence S, aligned to A; one buffer per value: fixed F2,
per token T2, per sequence S2") and the last line ("at N tokens and
sequences: P bytes, one buffer per value U bytes (Rx)"), and checks, from
the table alone:
  - every offset is a multiple of A;
  - within a region, no two buffers whose live ranges overlap share a byte
    (each takes its bytes rounded up to A);
  - every buffer ends within its region (offset + aligned bytes <= size);
  - each region's size is at least the largest sum of aligned bytes of its
    buffers live at one step (a lower bound no placement can beat), and at
    most the one-buffer-per-value size, which is the sum of them all;
  - P = F + (T + S) N and U = F2 + (T2 + S2) N.
Prints one "ok" line with the numbers, or "FAIL: <why>" and exits 1.
"""
import re
import sys


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    lines = open(sys.argv[1]).read().splitlines()
    rows = []
    arena = total = None
    for line in lines:
        m = re.fullmatch(r"arena: fixed (\d+), per token (\d+), per sequence (\d+), aligned to (\d+); "
                         r"one buffer per value: fixed (\d+), per token (\d+), per sequence (\d+)", line)
        if m:
            arena = [int(x) for x in m.groups()]
            continue
        m = re.fullmatch(r"at (\d+) tokens and sequences: (\d+) bytes, one buffer per value (\d+) "
                         r"bytes \(([0-9.]+)x\)", line)
        if m:
            total = [int(x) for x in m.groups()[:3]]
            continue
        if line.startswith("activations arena of ") or line.startswith("buffer "):
            continue
        parts = line.split(None, 6)
        if len(parts) < 6:
            fail("cannot read the row '%s'" % line)
        name, region, offset, nbytes, live, writer = parts[:6]
        first, last = (int(x) for x in live.split(".."))
        if region not in ("fixed", "tokens", "seqs"):
            fail("%s is in unknown region '%s'" % (name, region))
        rows.append(dict(name=name, region=region, offset=int(offset), bytes=int(nbytes),
                         first=first, last=last, writer=writer))
    if arena is None or total is None:
        fail("no arena line or no 'at N tokens' line")
    if not lines[-1].startswith("at "):
        fail("the last line is not the 'at N tokens' line")
    if not rows:
        fail("no buffers")
    fixed, per_token, per_seq, align, n_fixed, n_token, n_seq = arena
    size = {"fixed": fixed, "tokens": per_token, "seqs": per_seq}
    naive = {"fixed": n_fixed, "tokens": n_token, "seqs": n_seq}

    def aligned(n):
        return (max(n, 1) + align - 1) // align * align

    names = set()
    for r in rows:
        if r["name"] in names:
            fail("%s is listed twice" % r["name"])
        names.add(r["name"])
        if r["offset"] % align:
            fail("%s is at offset %d, not a multiple of %d" % (r["name"], r["offset"], align))
        if r["first"] < 0 or r["first"] > r["last"]:
            fail("%s has an empty live range (no step uses it)" % r["name"])
        if r["offset"] + aligned(r["bytes"]) > size[r["region"]]:
            fail("%s ends past its region %s of %d bytes" % (r["name"], r["region"],
                                                             size[r["region"]]))
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if a["region"] != b["region"] or b["first"] > a["last"] or a["first"] > b["last"]:
                continue
            if a["offset"] < b["offset"] + aligned(b["bytes"]) and \
               b["offset"] < a["offset"] + aligned(a["bytes"]):
                fail("%s and %s are live together and overlap" % (a["name"], b["name"]))
    bounds = {}
    for region in size:
        mine = [r for r in rows if r["region"] == region]
        if sum(aligned(r["bytes"]) for r in mine) != naive[region] and mine:
            fail("region %s: one buffer per value is %d bytes, the rows sum to %d" % (
                region, naive[region], sum(aligned(r["bytes"]) for r in mine)))
        steps = {s for r in mine for s in range(r["first"], r["last"] + 1)}
        bound = max([sum(aligned(r["bytes"]) for r in mine if r["first"] <= s <= r["last"])
                     for s in steps] or [0])
        if size[region] < bound:
            fail("region %s has %d bytes, less than the %d live at one step" % (
                region, size[region], bound))
        if size[region] > naive[region]:
            fail("region %s has %d bytes, more than one buffer per value (%d)" % (
                region, size[region], naive[region]))
        bounds[region] = bound
    n, planned, unshared = total
    if planned != fixed + (per_token + per_seq) * n:
        fail("%d bytes at %d tokens is not %d + (%d + %d) x %d" % (planned, n, fixed, per_token,
                                                                  per_seq, n))
    if unshared != n_fixed + (n_token + n_seq) * n:
        fail("one buffer per value at %d tokens is not %d" % (n, unshared))
    print("ok: %d buffers, per token %d <= one buffer per value %d, >= live-set bound %d; "
          "at %d tokens %d bytes" % (len(rows), per_token, n_token, bounds["tokens"], n, planned))


if __name__ == "__main__":
    main()
