#!/usr/bin/env python3
"""A tensor-parallel GPU plan as one accel-run process per rank, one GPU each, NCCL between them
(runtime/cuda/GpuProcessRank.h; docs/gpu-backend.md, "Several processes").

usage: gpu_tp_processes.py <accel-run> <fixtures> <workdir> [<accelc>]

The demo model compiled with -target=h200 -tp=2 (by accelc when given, else the plan is
$ACCEL_GPU_TP_DEMO_PLAN) is run as two processes on this machine, the way mpirun or srun would
start them on two machines:
  1. scored in f32 (whole, and token by token with CUDA graphs) and bf16 against HF's logits
     (test/fixtures/demo/logits.npy), the GPUs given with --device and picked by rank;
  2. greedy generation of 48 tokens against HF's generate (generated_ids.npy);
  3. a rank that cannot open its GPU: the other stops with an error naming it;
  4. a rank killed while the other runs its steps: the survivor's NCCL work is aborted and it
     exits with an error naming the rank within seconds, writing nothing;
  5. serving: rank 0 serves HTTP and sends each step to rank 1; a greedy completion equals HF's
     text, and SIGTERM to rank 0 stops both with exit 0.
Exit 77 (skipped) with fewer than two GPUs or without NCCL ($ACCEL_LIBNCCL).
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_TP = os.path.join(HERE, "..", "Partition", "Inputs", "run_tp_processes.py")
CHECK_GEN = os.path.join(HERE, "..", "Plan", "Inputs", "check_generation.py")
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ranks(run, plan, args, rank_args=None, timeout=300):
    """Both ranks through run_tp_processes.py: (exit status, rank 0's stdout + failures)."""
    cmd = [sys.executable, RUN_TP, run, plan, "--ranks", "2", "--timeout", str(timeout)]
    for r, a in (rank_args or {}).items():
        cmd += ["--rank-args", f"{r}={a}"]
    p = subprocess.run(cmd + ["--"] + args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def compare(got_path, want_path, tol, what):
    got = np.load(got_path).astype(np.float64)
    want = np.load(want_path).astype(np.float64)
    got, want = got.reshape(-1, want.shape[-1]), want.reshape(-1, want.shape[-1])
    if got.shape != want.shape:
        return fail(f"{what}: logits {got.shape}, HF {want.shape}")
    rel = np.abs(got - want).max() / max(1e-30, np.abs(want).max())
    agree = (got.argmax(-1) == want.argmax(-1)).mean()
    print(f"{what}: max |diff| / max |logit| = {rel:.3g} (tolerance {tol:g}), "
          f"argmax agreement {agree:.3f}")
    if rel > tol:
        fail(f"{what}: {rel:.3g} > {tol:g}")


def main():
    run, fixtures, work = sys.argv[1:4]
    accelc = sys.argv[4] if len(sys.argv) > 4 else None
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # multicast off on shared machines
    os.makedirs(work, exist_ok=True)
    demo = os.path.join(fixtures, "demo")
    devices = subprocess.run([run, "--list-devices"], capture_output=True, text=True).stdout
    m = re.search(r"(\d+) GPU\(s\)", devices)
    if not m or int(m.group(1)) < 2:
        print("SKIP: fewer than two GPUs: " + devices.strip())
        sys.exit(77)
    plan = os.environ.get("ACCEL_GPU_TP_DEMO_PLAN", os.path.join(work, "demo.tp2.plan"))
    if accelc:
        plan = os.path.join(work, "demo.tp2.plan")
        c = subprocess.run([accelc, os.path.join(demo, "model.onnx"), "-target=h200", "-tp=2",
                            "-o", plan], capture_output=True, text=True)
        if c.returncode:
            print(c.stderr)
            sys.exit(1)
    ids = os.path.join(demo, "input_ids.npy")
    common = ["--gpu-memory-utilization", "0.2", "--tp-timeout", "60"]

    # 1. Logits against HF.
    for dt, mode, tol, dev in [("f32", "0", 1e-4, True), ("f32", "1", 1e-4, False),
                               ("bf16", "1", 3e-2, False)]:
        out = os.path.join(work, f"demo.procs.{dt}.{mode}.npy")
        if os.path.exists(out):
            os.remove(out)
        what = f"demo -tp=2 as 2 processes, {dt}, --chunk {mode}" + \
            (", --device 0/1" if dev else ", GPU = rank")
        rc, text = ranks(run, plan, ["--score", ids, "--logits-out", out, "--dtype", dt,
                                     "--chunk", mode] + common,
                         {0: "--device 0", 1: "--device 1"} if dev else None)
        if rc:
            if "need NCCL" in text or "ACCEL_LIBNCCL" in text:
                print("SKIP: " + text)
                sys.exit(77)
            fail(f"{what}: exit {rc}: {text}")
            continue
        compare(out, os.path.join(demo, "logits.npy"), tol, what)

    # 2. Greedy generation against HF's.
    rc, text = ranks(run, plan, ["--prompt", "In the beginning", "-n", "48", "--print-ids",
                                 "--dtype", "f32"] + common)
    gen = os.path.join(work, "greedy.txt")
    with open(gen, "w") as f:
        f.write(text)
    if rc:
        fail(f"greedy generation: exit {rc}: {text}")
    else:
        c = subprocess.run([sys.executable, CHECK_GEN, gen, os.path.join(demo, "generated_ids.npy"),
                            os.path.join(demo, "generated.txt")], capture_output=True, text=True)
        print("greedy generation, 48 tokens, as 2 processes: " +
              ("equals HF's" if c.returncode == 0 else "differs: " + c.stdout + c.stderr))
        if c.returncode:
            fail("greedy generation differs from HF's")

    # 3. A rank that cannot open its GPU.
    out = os.path.join(work, "nogpu.npy")
    rc, text = ranks(run, plan, ["--score", ids, "--logits-out", out] + common,
                     {1: "--device 9"}, timeout=120)
    print("rank 1 on GPU 9: exit", rc, "|", text.strip().replace("\n", " | "))
    if rc == 0 or "rank 1 left the tensor-parallel group" not in text or os.path.exists(out):
        fail("a rank without its GPU: the other did not stop naming it")

    # 4. A rank killed while the other runs its steps.
    long_ids = os.path.join(work, "long_ids.npy")
    np.save(long_ids, np.random.default_rng(0).integers(0, 2048, size=(1, 500), dtype=np.int64))
    out = os.path.join(work, "killed.npy")
    port = free_port()
    procs = {}
    for r in (1, 0):
        procs[r] = subprocess.Popen(
            [run, plan, "--tp-rank", str(r), "--tp-master", f"127.0.0.1:{port}", "--score",
             long_ids, "--logits-out", out, "--chunk", "1", "--enforce-eager", "--dtype", "f32"]
            + common, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Rank 0 prints its KV cache line once NCCL is up and its profiling step ran.
    err0 = []
    killed_at = [None]

    def read0():
        for line in procs[0].stderr:
            err0.append(line)
            if killed_at[0] is None and "KV cache" in line:
                procs[1].send_signal(signal.SIGKILL)
                killed_at[0] = time.monotonic()
    t = threading.Thread(target=read0)
    t.start()
    try:
        rc0 = procs[0].wait(timeout=120)
    except subprocess.TimeoutExpired:
        procs[0].kill()
        rc0 = None
    t.join()
    procs[1].kill()
    procs[1].wait()
    text = "".join(err0).strip()
    took = time.monotonic() - killed_at[0] if killed_at[0] is not None else float("nan")
    print(f"rank 1 killed after rank 0's KV cache line: rank 0 exit {rc0} {took:.2f} s later | "
          + text.replace("\n", " | "))
    if killed_at[0] is None:
        fail("rank 0 never printed its KV cache line")
    elif rc0 in (None, 0) or "rank 1 left the tensor-parallel group" not in text or \
            os.path.exists(out):
        fail("a killed rank: the survivor did not stop with an error naming it")

    # 5. Serving: rank 0 takes the requests, rank 1 runs the steps it sends.
    text = open(os.path.join(demo, "generated.txt"), encoding="utf-8").read()
    prompt = re.search(r"^prompt: '(.*)'$", text, re.M).group(1)
    hf_text = text.split("\ntext:\n", 1)[1].rstrip("\n")[len(prompt):]
    port = free_port()
    procs = {}
    for r in (1, 0):
        procs[r] = subprocess.Popen(
            [run, plan, "--tp-rank", str(r), "--tp-master", f"127.0.0.1:{port}", "--port", "0",
             "--served-model-name", "demo", "--dtype", "f32", "--max-num-seqs", "4"] + common,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = None
    for line in procs[0].stderr:
        m = re.search(r"at (http://\S+)", line)
        if m:
            base = m.group(1)
            break
    got = None
    if base:
        req = urllib.request.Request(
            base + "/v1/completions", method="POST", headers={"Content-Type": "application/json"},
            data=json.dumps({"model": "demo", "prompt": prompt, "max_tokens": 48,
                             "temperature": 0}).encode())
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                got = json.loads(resp.read())["choices"][0]["text"]
        except Exception as e:  # noqa: BLE001 (reported below)
            got = f"<{e}>"
    procs[0].send_signal(signal.SIGTERM)
    rcs = {}
    for r, p in procs.items():
        try:
            rcs[r] = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            rcs[r] = "killed"
    print(f"serving as 2 GPU processes: greedy completion {'equals' if got == hf_text else 'differs from'}"
          f" HF's text; exits after SIGTERM {rcs}")
    if got != hf_text or any(rc != 0 for rc in rcs.values()):
        fail(f"serving as 2 processes: {got!r} / {rcs}")

    print("PASS" if not failures else f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
