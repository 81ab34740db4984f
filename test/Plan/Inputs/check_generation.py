#!/usr/bin/env python3
"""Checks accel-run's generation of the demo model against HF transformers'.

usage: check_generation.py <accel-run stdout> <generated_ids.npy> <generated.txt>
                           [--stop STRING] [--prompt-tokens N]

generated_ids.npy and generated.txt were written by HF `generate` (greedy) when
the demo model was made (test/fixtures/demo/train_demo.py): the prompt ids
followed by the generated ids, and the decoded text after a 'text:' line.

Without --stop: the 'ids:' line must equal HF's generated ids and the text
printed before it must equal HF's text. With --stop S: the output must be
HF's text cut just before the first S (the OpenAI convention), and the ids a
prefix of HF's.
"""
import argparse
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("output")
    p.add_argument("ids")
    p.add_argument("text")
    p.add_argument("--stop")
    p.add_argument("--prompt-tokens", type=int, default=4)
    a = p.parse_args()

    out = open(a.output, encoding="utf-8").read()
    if "\nids:" not in out:
        sys.exit("no 'ids:' line in accel-run's output:\n" + out)
    text, ids_line = out.rsplit("\nids:", 1)
    got_ids = [int(t) for t in ids_line.split()]
    want_ids = np.load(a.ids)[0, a.prompt_tokens:].tolist()
    ref = open(a.text, encoding="utf-8").read()
    want_text = ref.split("\ntext:\n", 1)[1].rstrip("\n")

    if a.stop:
        want_text = want_text[: want_text.index(a.stop)]
        if got_ids != want_ids[: len(got_ids)]:
            sys.exit(f"ids are not a prefix of HF's:\n  got  {got_ids}\n  want {want_ids}")
    elif got_ids != want_ids:
        first = next((i for i, (g, w) in enumerate(zip(got_ids, want_ids)) if g != w),
                     min(len(got_ids), len(want_ids)))
        sys.exit(f"ids differ from HF's at generated token {first}:\n"
                 f"  got  {got_ids}\n  want {want_ids}")
    if text != want_text:
        sys.exit(f"text differs from HF's:\n--- got\n{text!r}\n--- want\n{want_text!r}")
    print(f"ok: {len(got_ids)} tokens and the text match HF transformers")


if __name__ == "__main__":
    main()
