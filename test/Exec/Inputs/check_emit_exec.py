#!/usr/bin/env python3
"""Every fixture's exec IR, as `accelc -emit=exec` prints it, verifies in accel-opt.

usage: check_emit_exec.py <accelc> <accel-opt> <fixtures dir> <work dir>

For every fixture (test/fixtures/models/*, and the demo model) and each of
three compiles -- -target=cpu, -target=h200 (generated kernels, no host
step allowed), and -target=h200 -tp=2 where the heads divide -- it runs
`accelc -emit=exec`, then `accel-opt` on the printed IR (parse + verify
every op), and checks that:
  - accel-opt prints it back unchanged (the IR round-trips);
  - the module has one exec.schedule with steps, an activations arena and
    a KV pool, and every step is an exec step op;
  - an h200 module has no exec.onnx step (every op runs on the GPU) and
    declares exec.kernel for the steps whose `kernel` it names.
Prints one line per fixture and a summary; exits 1 on the first failure,
naming the fixture, the compile and what is wrong.
"""
import os
import re
import subprocess
import sys


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    accelc, opt, fixtures, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    dirs = sorted(os.path.join(fixtures, "models", d) for d in os.listdir(os.path.join(fixtures, "models")))
    dirs.append(os.path.join(fixtures, "demo"))
    checked = 0
    for d in dirs:
        model = os.path.join(d, "model.onnx")
        if not os.path.exists(model):
            continue
        name = os.path.basename(d)
        done = []
        for label, flags in (("cpu", ["-target=cpu"]), ("h200", ["-target=h200"]),
                             ("h200 tp=2", ["-target=h200", "-tp=2"])):
            c = run([accelc, model, "-emit=exec"] + flags)
            if c.returncode != 0:
                if "tp=2" in label and "divide" in c.stderr:
                    continue  # heads that 2 ranks cannot split: refused, checked elsewhere
                fail("%s (%s): accelc -emit=exec failed: %s" % (name, label, c.stderr.strip()))
            ir = c.stdout
            path = os.path.join(work, "%s.%s.mlir" % (name, label.replace(" ", "_")))
            with open(path, "w") as f:
                f.write(ir)
            o = run([opt, path])
            if o.returncode != 0:
                fail("%s (%s): accel-opt rejects the exec IR: %s" % (name, label, o.stderr.strip()))
            # (accelc may print an empty resource section, {-# #-}.)
            if o.stdout.strip() != re.sub(r"\{-#\s*#-\}\s*$", "", ir.strip()).strip():
                fail("%s (%s): the exec IR does not round-trip through accel-opt" % (name, label))
            if len(re.findall(r"^\s*exec\.schedule @", ir, re.M)) != 1:
                fail("%s (%s): not one exec.schedule" % (name, label))
            if not re.search(r"exec\.arena @act activations", ir):
                fail("%s (%s): no activations arena" % (name, label))
            if not re.search(r"^\s*exec\.kv_pool @", ir, re.M):
                fail("%s (%s): no exec.kv_pool" % (name, label))
            steps = re.findall(r"^\s*(?:%[\w#:, %]+ = )?(exec\.[a-z_]+)", ir, re.M)
            kinds = {s for s in steps} - {"exec.arena", "exec.kv_pool", "exec.kernel",
                                           "exec.schedule", "exec.step_size", "exec.step_input",
                                           "exec.alloc", "exec.slice", "exec.weight",
                                           "exec.view", "exec.step_output"}
            if not kinds:
                fail("%s (%s): the schedule has no step" % (name, label))
            if label.startswith("h200"):
                if "exec.onnx" in kinds:
                    fail("%s (%s): an exec.onnx step is left in a GPU module" % (name, label))
                for k in set(re.findall(r"kernel = @(\w+)", ir)):
                    if not re.search(r"exec\.kernel @%s\(" % k, ir):
                        fail("%s (%s): a step names kernel @%s, which is not declared" % (name, label, k))
            done.append("%s %d step kinds" % (label, len(kinds)))
            checked += 1
        print("%s: %s" % (name, ", ".join(done)))
    print("%d exec modules verified" % checked)


if __name__ == "__main__":
    main()
