"""Token sets for -precision=w8a8 (docs/precision.md).

Random-weight fixtures (test/fixtures/models: vocabulary 256, 128
positions): w8a8_calib.npy and w8a8_heldout.npy, [8, 32] ids drawn as the
fixtures' own input_ids.npy are (uniform in [3, 256)) from two seeds, so the
held-out set shares no sequence with the calibration set.

The trained demo model (test/fixtures/demo), when the path of accel-tokenize
is given: demo_calib.npy, [8, 96] ids from the first 20,000 bytes of its
corpus kjv.txt (Genesis), and demo_heldout.npy, [4, 96] ids from the last
20,000 bytes (Revelation), each tokenized line by line with the model's
tokenizer.json and concatenated. The whole corpus was the training text, so
neither set is unseen by the model; they are disjoint from each other.

    python3 make_w8a8_tokens.py [path/to/accel-tokenize]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
for name, seed in (("w8a8_calib.npy", 7), ("w8a8_heldout.npy", 8)):
    ids = np.random.default_rng(seed).integers(3, 256, size=(8, 32), dtype=np.int64)
    np.save(os.path.join(here, name), ids)

if len(sys.argv) > 1:
    demo = os.path.join(here, "..", "..", "fixtures", "demo")
    text = open(os.path.join(demo, "kjv.txt"), "rb").read()

    def tokenize(chunk):
        with tempfile.NamedTemporaryFile(suffix=".txt") as f:
            f.write(chunk)
            f.flush()
            out = subprocess.run([sys.argv[1], os.path.join(demo, "tokenizer.json"), f.name],
                                 check=True, capture_output=True, text=True).stdout
        ids = []
        for line in out.splitlines()[1:]:  # the first line describes the tokenizer
            ids += json.loads(line)["ids"]
        return ids

    calib = tokenize(text[:20000])[: 8 * 96]
    held = tokenize(text[-20000:])[-4 * 96:]
    np.save(os.path.join(here, "demo_calib.npy"), np.array(calib, dtype=np.int64).reshape(8, 96))
    np.save(os.path.join(here, "demo_heldout.npy"), np.array(held, dtype=np.int64).reshape(4, 96))
