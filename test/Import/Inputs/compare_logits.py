"""compare_logits.py A.npy B.npy TOL: prints max |A - B| / max |B| and whether
the argmaxes agree; exits 1 when the first exceeds TOL or an argmax differs."""
import sys

import numpy as np

a, b, tol = np.load(sys.argv[1]), np.load(sys.argv[2]), float(sys.argv[3])
if a.shape != b.shape:
    print(f"shapes differ: {a.shape} and {b.shape}")
    sys.exit(1)
rel = float(np.abs(a - b).max() / np.abs(b).max())
same = bool((a.argmax(-1) == b.argmax(-1)).all())
print(f"max rel diff {rel:.3g}, argmax {'equal' if same else 'differs'}")
sys.exit(0 if rel <= tol and same else 1)
