#!/usr/bin/env python3
"""Runs a tensor-parallel CPU plan as one accel-run process per rank on this machine, the way
mpirun would on several (docs/gpu-backend.md, "Several processes"), and prints rank 0's output.

usage: run_tp_processes.py <accel-run> <plan> --ranks N [--rank-plan R=PLAN ...]
                           [--rank-args R="ARGS" ...] [--kill R=SECONDS ...]
                           [--only-ranks R ...] [--timeout S] -- <accel-run args...>

Every rank gets `--tp-rank R --tp-master 127.0.0.1:PORT` (a free port) and the args after
`--`; `--rank-plan` gives one rank another plan (to check that the group refuses it);
`--rank-args` gives one rank more arguments (its GPU, or flags the group must refuse);
`--kill` kills a rank (SIGKILL) that many seconds after it started (the others must stop
with an error, not wait forever); `--only-ranks` starts only those ranks (to check the
timeouts). Exits with the first non-zero exit status of any rank (rank 0's first), after
printing each failing rank's stderr; a killed rank's status does not count.
"""
import argparse
import shlex
import socket
import subprocess
import sys
import threading


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser()
    p.add_argument("accel_run")
    p.add_argument("plan")
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--rank-plan", action="append", default=[])
    p.add_argument("--rank-args", action="append", default=[])
    p.add_argument("--kill", action="append", default=[])
    p.add_argument("--only-ranks", type=int, nargs="*")
    p.add_argument("--timeout", type=float, default=300)
    a = p.parse_args(argv)
    plans = {r: a.plan for r in range(a.ranks)}
    for spec in a.rank_plan:
        r, path = spec.split("=", 1)
        plans[int(r)] = path
    extra = {}
    for spec in a.rank_args:
        r, args = spec.split("=", 1)
        extra[int(r)] = shlex.split(args)
    kills = {}
    for spec in a.kill:
        r, secs = spec.split("=", 1)
        kills[int(r)] = float(secs)
    port = free_port()
    ranks = a.only_ranks if a.only_ranks is not None else list(range(a.ranks))
    procs = {}
    for r in sorted(ranks, reverse=True):  # rank 0 last: the others wait for it
        cmd = [a.accel_run, plans[r], "--tp-rank", str(r), "--tp-master", f"127.0.0.1:{port}"]
        procs[r] = subprocess.Popen(cmd + rest + extra.get(r, []), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        if r in kills:
            threading.Timer(kills[r], procs[r].kill).start()
    outs = {}
    for r, proc in procs.items():
        try:
            outs[r] = proc.communicate(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            outs[r] = proc.communicate()
            outs[r] = (outs[r][0], outs[r][1] + f"\n(rank {r} killed after {a.timeout} s)")
    status = 0
    for r in sorted(procs):
        out, err = outs[r]
        if r == min(procs):
            sys.stdout.write(out)
        if r in kills:
            sys.stdout.write(f"rank {r} was killed (exit {procs[r].returncode})\n")
            continue
        if procs[r].returncode != 0:
            sys.stdout.write(f"rank {r} exited {procs[r].returncode}: {err.strip()}\n")
            status = status or procs[r].returncode
    sys.exit(status)


if __name__ == "__main__":
    main()
