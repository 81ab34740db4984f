#!/usr/bin/env python3
"""A byte-level BPE tokenizer.json with Llama-3's vocabulary size (128,256 ids:
256 byte tokens, 127,744 multi-byte tokens drawn like a real vocabulary's --
mostly lower-case word pieces with and without a leading space, some digits,
punctuation runs and non-ASCII words -- and 256 special tokens ending in
<|end_of_text|>, <|eot_id|>), for the structured-output benchmark of an
8B-shaped checkpoint with random weights, which has no tokenizer of its own.
No merges: it is for decoding and token masks, not for encoding text.

    make_tokenizer.py OUT_DIR     -> OUT_DIR/tokenizer.json
"""
import json
import os
import random
import sys


def byte_chars():
    out, n = [], 0
    for b in range(256):
        printable = 33 <= b <= 126 or 161 <= b <= 172 or b >= 174
        out.append(chr(b) if printable else chr(256 + n))
        n += 0 if printable else 1
    return out


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = random.Random(0)
    chars = byte_chars()
    enc = lambda s: "".join(chars[b] for b in s.encode())
    vocab = {chars[b]: b for b in range(256)}
    letters = "etaoinshrdlcumwfgypbvkjxqz"
    weights = [12, 9, 8, 7.5, 7, 6.7, 6.3, 6, 5.9, 4.3, 4, 2.8, 2.8, 2.4, 2.4, 2.2, 2, 2, 1.9,
               1.5, 1, .8, .15, .15, .1, .07]
    extra = ["é", "ü", "ñ", "ß", "ж", "д", "я", "中", "文", "日", "本", "語", "한", "国"]
    target = 128000
    while len(vocab) < target:
        r = rng.random()
        if r < 0.70:
            w = "".join(rng.choices(letters, weights, k=rng.randint(2, 9)))
            if rng.random() < 0.15:
                w = w.capitalize()
            if rng.random() < 0.55:
                w = " " + w
        elif r < 0.80:
            w = "".join(rng.choices("0123456789", k=rng.randint(1, 3)))
        elif r < 0.90:
            w = "".join(rng.choices(" \n\t.,;:!?'\"()[]{}<>-_=+*/\\#@$%&|~`^", k=rng.randint(2, 4)))
        else:
            w = ("" if rng.random() < 0.5 else " ") + "".join(rng.choices(extra, k=rng.randint(1, 3)))
        t = enc(w)
        if t not in vocab:
            vocab[t] = len(vocab)
    specials = ["<|begin_of_text|>", "<|end_of_text|>"] + [
        f"<|reserved_special_token_{i}|>" for i in range(252)] + ["<|eot_id|>", "<|eom_id|>"]
    added = [{"id": target + i, "content": s, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}
             for i, s in enumerate(specials)]
    tok = {"version": "1.0", "added_tokens": added, "normalizer": None,
           "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                             "use_regex": True},
           "post_processor": None, "decoder": {"type": "ByteLevel"},
           "model": {"type": "BPE", "dropout": None, "unk_token": None,
                     "continuing_subword_prefix": None, "end_of_word_suffix": None,
                     "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                     "vocab": vocab, "merges": []}}
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tok, f, ensure_ascii=False)
    print(f"make_tokenizer: {len(vocab) + len(added)} ids -> {out}/tokenizer.json")


if __name__ == "__main__":
    main()
