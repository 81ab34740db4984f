#!/usr/bin/env python3
"""Checks accel's tokenizer against the Hugging Face `tokenizers` package.

  check_tokenizer.py --tool build/bin/accel-tokenize [--corpus corpus.txt]
                     [--only NAME[,NAME...]] [--keep DIR] [-v]

It (a) builds tokenizer.json files with `tokenizers` in a temporary
directory -- BPE models trained on the corpus with BpeTrainer, one per style
of pre-tokenization accel supports (GPT-2 byte-level, Llama-3, Qwen2 with
NFC, RoBERTa, Llama-2 SentencePiece-style with byte fallback or <unk>,
Metaspace, literal Split behaviours and Digits) plus the committed demo
tokenizer -- and (b) encodes and decodes a varied set of texts with both
`tokenizers` and accel-tokenize (test/tokenizer/accel-tokenize.cpp), and
compares:

  - ids with and without special tokens (encode(add_special_tokens=...)),
  - decode(ids) with skip_special_tokens true and false,
  - the chunks DecodeStream(skip_special_tokens=True).step() yields,
  - decode of random id sequences (cutting UTF-8 sequences, unknown ids),
  - get_vocab_size(), and the BOS/EOS accel reports against the tokens each
    configuration is built with.

The texts: every line of the corpus, pairs of lines joined by newlines,
carriage returns and tabs, the whole corpus as one text, control
characters, special tokens in various positions, and random strings
(seeded). Exit status 0 when everything matches, 1 otherwise (every
mismatch is printed), 2 on a usage or setup problem (e.g. `tokenizers` is
not installed: pip install tokenizers).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import zlib

try:
    from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models,
                            normalizers, pre_tokenizers, processors, trainers)
    from tokenizers.decoders import DecodeStream
except ImportError as e:  # pragma: no cover
    print(f"check_tokenizer.py: needs the `tokenizers` package ({e}); "
          "pip install tokenizers", file=sys.stderr)
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

GPT2_RE = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_RE = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
             r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_RE = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
            r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# ---------------------------------------------------------------------------
# Texts
# ---------------------------------------------------------------------------


def read_corpus(path):
    with open(path, encoding="utf-8", newline="") as f:
        data = f.read()
    # Split on '\n' only: the corpus holds U+2028, U+0085, \v and \f inside
    # lines, which str.splitlines() would split on.
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def training_texts(lines):
    texts = list(lines)
    seps = ["\n", "\r\n", "\n\n"]
    for i in range(0, len(lines) - 1, 3):
        texts.append(lines[i] + seps[i % 3] + lines[i + 1])
    return texts


def random_texts(rng, n):
    pool = (
        list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        + list(" " * 12 + "\t\n\r" + "'" * 6 + "sStTmMdDlLrReEvV")
        + ["ſ", "'s", "'S", "'ll", "'LL", "'re", "'ve", "'d", "'m", "'t"]
        + list(".,;:!?-_()[]{}<>|/\\\"@#$%^&*+=~`")
        + ["\u00a0", "\u3000", "\u2003", "\u200b", "\u200d", "\u200c", "\u2028", "\u0085",
           "\x0b", "\x0c", "\x00", "\x1f", "\x7f"]
        + list("éèêëñçåøæœßðþÉÑÇÅØÆŒ") + ["e\u0301", "a\u0308", "\u0301", "\u0323\u0302"]
        + list("αβγδεЖЗИКЛабвгд") + list("你好世界中文日本語한국어テスト")
        + list("مرحبا") + list("नमस्ते") + list("שלום") + list("สวัสดี")
        + list("٠١٢٣०१२३１２３½²Ⅻ①")
        + ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇺🇸", "🏳️‍🌈", "1️⃣", "🫠", "𝐀", "𠀀"]
        # Letters and digits newer than Python's unicodedata (Unicode 16).
        + ["\U000105C0", "\U00010D40", "\U000116D0", "\U00011F50"]
        + ["<|endoftext|>", "<s>", "</s>", "<mask>", "<|im_start|>", "<|begin_of_text|>",
           "<|eot_id|>", "[SEP]", "the", "café", "cafe\u0301", "<", "|", ">"]
    )
    out = []
    for _ in range(n):
        k = rng.randint(1, 40)
        out.append("".join(rng.choice(pool) for _ in range(k)))
    # Any code point at all (classification of every script), with spaces,
    # apostrophes and newlines between.
    glue = [" ", "  ", "'", "\n", "", "", ""]
    for _ in range(n // 2):
        t = ""
        for _ in range(rng.randint(1, 12)):
            c = rng.randrange(0x20, 0x110000)
            if 0xD800 <= c <= 0xDFFF:
                c = 0x41
            t += chr(c) + rng.choice(glue)
        out.append(t)
    return out


def build_cases(lines, rng):
    cases = list(lines)
    seps = ["\n", "\r\n", "\n\n", " \n", "\n ", "\r", "\t\n", "\n\t", "  \n\n  ", "\r\n\r\n",
            " \r\n", "\n\n\n"]
    for k, i in enumerate(range(0, len(lines) - 1, 5)):
        cases.append(lines[i] + seps[k % len(seps)] + lines[i + 1])
    cases.append("\n".join(lines))
    cases += [
        "", "\x00", "a\x00b", "\r\n", "\n", "\r", "\n\n\n", " \n", "\n ", "\r\n\r\n",
        "a\r\nb", "x \r\n y", "end\n", "\nstart", "  \n  \n  ", "\t\n\t", "a\n\n\nb",
        "hello\r\n\r\nworld", "1\n2\n3", "'s\n's", "x\u2028y", "x\u0085y",
    ]
    cases += random_texts(rng, 300)
    return cases


def special_cases(contents):
    out = []
    for t in contents:
        out += [t, f"a{t}b", f"a {t} b", f"  {t}  ", f"{t}{t}", f"\n{t}\n", f"{t}'s",
                f"x{t}", f"{t} Hello", f"Hello {t}", f"\t{t}\t", f"{t}\r\n{t}"]
    return out


# ---------------------------------------------------------------------------
# Tokenizers
# ---------------------------------------------------------------------------


def bpe_trainer(vocab_size, specials=(), alphabet=True, limit_alphabet=None):
    kw = dict(vocab_size=vocab_size, special_tokens=list(specials), show_progress=False)
    if alphabet:
        kw["initial_alphabet"] = pre_tokenizers.ByteLevel.alphabet()
    if limit_alphabet is not None:
        kw["limit_alphabet"] = limit_alphabet
    return trainers.BpeTrainer(**kw)


def as_json(tok):
    return json.loads(tok.to_str())


def make_gpt2(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    tok.train_from_iterator(texts, bpe_trainer(1000, ["<|endoftext|>"]))
    return as_json(tok), dict(bos=None, eos="<|endoftext|>")


def make_llama3(texts):
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_RE), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, bpe_trainer(1500))
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                "<|end_header_id|>", "<|eot_id|>"]
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(
            single="<|begin_of_text|> $A",
            pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
            special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    j = as_json(tok)
    # ignore_merges matters only for words in the vocabulary that the merges
    # would not produce: add a few such words (Llama-3 has many).
    vocab = j["model"]["vocab"]
    for word in ["ĠTokenization", "Ġmachine", "Ġthe", "ing", "Ġ12", "Hello", "ĠÃ©"]:
        if word not in vocab:
            vocab[word] = len(vocab)
    # The added tokens stay after the model's vocabulary (tokenizers numbers
    # them from its size on, whatever the file says).
    base = len(vocab)
    for k, t in enumerate(sorted(j["added_tokens"], key=lambda t: t["id"])):
        t["id"] = base + k
    for piece in j["post_processor"]["processors"][1]["special_tokens"].values():
        piece["ids"] = [base + specials.index(piece["id"])]
    return j, dict(bos="<|begin_of_text|>", eos="<|end_of_text|>")


def make_qwen2(texts):
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_RE), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.train_from_iterator(texts, bpe_trainer(1200))
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False)
                            for s in ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]])
    # A normalized, non-special added token written decomposed: it matches
    # its NFC form, and decodes to it.
    tok.add_tokens([AddedToken("cafe\u0301", normalized=True, special=False)])
    return as_json(tok), dict(bos=None, eos="<|endoftext|>")


def make_roberta(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, bpe_trainer(900, ["<s>", "<pad>", "</s>", "<unk>"]))
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, special=True, normalized=False)])
    tok.add_tokens([AddedToken("the", single_word=True, normalized=True)])
    tok.post_processor = processors.RobertaProcessing(
        ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")))
    return as_json(tok), dict(bos="<s>", eos="</s>")


def make_llama2(texts):
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"),
                                           normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.train_from_iterator(texts, bpe_trainer(1200, ["<unk>", "<s>", "</s>"], alphabet=False,
                                               limit_alphabet=120))
    j = as_json(tok)
    vocab = j["model"]["vocab"]
    nxt = max(vocab.values()) + 1
    for b in range(256):
        name = "<0x%02X>" % b
        if name not in vocab:
            vocab[name] = nxt
            nxt += 1
    j["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": "<s>", "type_id": 1}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [vocab["<s>"]], "tokens": ["<s>"]}},
    }
    return j, dict(bos="<s>", eos="</s>")


def make_llama2_unk(texts):
    j, meta = make_llama2(texts)
    j["model"]["byte_fallback"] = False
    vocab = j["model"]["vocab"]
    for b in range(256):
        vocab.pop("<0x%02X>" % b, None)
    # Keep the ids dense.
    j["model"]["vocab"] = {t: i for i, (t, _) in
                           enumerate(sorted(vocab.items(), key=lambda kv: kv[1]))}
    for t in j["added_tokens"]:
        t["id"] = j["model"]["vocab"][t["content"]]
    pp = j["post_processor"]["special_tokens"]["<s>"]
    pp["ids"] = [j["model"]["vocab"]["<s>"]]
    return j, meta


def make_metaspace(texts):
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first",
                                                 split=True)
    tok.decoder = decoders.Sequence([decoders.Metaspace(replacement="▁", prepend_scheme="first"),
                                     decoders.ByteFallback(), decoders.Fuse()])
    tok.train_from_iterator(texts, bpe_trainer(1000, ["<unk>", "<s>", "</s>"], alphabet=False,
                                               limit_alphabet=150))
    tok.add_special_tokens([AddedToken("[SEP]", special=True, lstrip=True, rstrip=True,
                                       normalized=False)])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", tok.token_to_id("<s>")),
                                              ("</s>", tok.token_to_id("</s>"))])
    j = as_json(tok)
    vocab = j["model"]["vocab"]
    nxt = max(max(vocab.values()), max(t["id"] for t in j["added_tokens"])) + 1
    for b in range(256):
        name = "<0x%02X>" % b
        if name not in vocab:
            vocab[name] = nxt
            nxt += 1
    return j, dict(bos="<s>", eos="</s>")


def make_splits(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(" ", behavior="merged_with_next"),
        pre_tokenizers.Split("-", behavior="removed"),
        pre_tokenizers.Split(",", behavior="merged_with_previous"),
        pre_tokenizers.Split("ab", behavior="contiguous", invert=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex(GPT2_RE), behavior="isolated", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, bpe_trainer(700, ["<|endoftext|>"]))
    return as_json(tok), dict(bos=None, eos="<|endoftext|>")


def make_digits(texts):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, bpe_trainer(600))
    return as_json(tok), dict(bos=None, eos=None)


def byte_alphabet_json(normalizer):
    """A BPE without merges over the byte-level alphabet: its ids spell the
    bytes of the normalized text, which checks the normalizer alone."""
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
        "normalizer": normalizer,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False,
                          "trim_offsets": False, "use_regex": False},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {c: i for i, c in enumerate(alphabet)}, "merges": []},
    }


def normalization_texts():
    """Every character with a canonical decomposition, composed and
    decomposed, in runs of 40; and random starters + combining marks."""
    import unicodedata
    chars = [chr(c) for c in range(0x110000)
             if not 0xD800 <= c <= 0xDFFF and unicodedata.decomposition(chr(c))
             and not unicodedata.decomposition(chr(c)).startswith("<")]
    texts = []
    for i in range(0, len(chars), 40):
        run = "".join(chars[i:i + 40])
        texts += [run, unicodedata.normalize("NFD", run)]
    marks = [chr(c) for c in range(0x110000)
             if not 0xD800 <= c <= 0xDFFF and unicodedata.combining(chr(c))]
    starters = list("aeiouAEIOUnNcCsSzZ") + ["\u1100", "\u1161", "\u11a8", "\uac00",
                                             "\u0b47", "\u0b3e", "\u0dd9", "\u0dcf",
                                             "\u3046", "\u304b", "\u05d0", "\u0627",
                                             "\U00011935", "\U00011930"]
    rng = random.Random(99)
    for _ in range(1500):
        t = ""
        for _ in range(rng.randint(1, 8)):
            t += rng.choice(starters) + "".join(rng.choice(marks)
                                                for _ in range(rng.randint(0, 4)))
        texts.append(t)
    # Hangul: every L+V and LV+T pairing in decomposed form, sampled.
    for _ in range(100):
        l = 0x1100 + rng.randrange(19)
        v = 0x1161 + rng.randrange(21)
        t = 0x11A7 + rng.randrange(28)
        texts.append(chr(l) + chr(v) + (chr(t) if t != 0x11A7 else "") + chr(v))
    return texts


def make_nfc(_texts):
    return byte_alphabet_json({"type": "NFC"}), dict(bos=None, eos=None,
                                                     extra=normalization_texts())


def make_nfd(_texts):
    return byte_alphabet_json({"type": "Sequence", "normalizers": [{"type": "NFD"}]}), dict(
        bos=None, eos=None, extra=normalization_texts())


def load_demo(_texts):
    path = os.path.join(REPO, "test", "fixtures", "demo", "tokenizer.json")
    with open(path, encoding="utf-8") as f:
        return json.load(f), dict(bos=None, eos="<|endoftext|>")


CONFIGS = {
    "gpt2": make_gpt2,
    "llama3": make_llama3,
    "qwen2": make_qwen2,
    "roberta": make_roberta,
    "llama2": make_llama2,
    "llama2-unk": make_llama2_unk,
    "metaspace": make_metaspace,
    "splits": make_splits,
    "digits": make_digits,
    "nfc": make_nfc,
    "nfd": make_nfd,
    "demo": load_demo,
}

# ---------------------------------------------------------------------------
# Comparison
# ---------------------------------------------------------------------------


def hf_stream(tok, ids):
    """The chunks DecodeStream yields; "<error>" ends the list where step()
    raised (tokenizers does when the decoder rewrites earlier text, e.g.
    byte-fallback bytes that stop being valid UTF-8)."""
    ds = DecodeStream(skip_special_tokens=True)
    out = []
    for i in ids:
        try:
            piece = ds.step(tok, i)
        except Exception:  # DecodeStreamError::InvalidPrefix
            out.append("<error>")
            break
        out.append(piece if piece is not None else "")
    return out


def accel_stream(result):
    out = list(result.get("stream", []))
    if "stream_error" in result:
        out.append("<error>")
    return out


def hf_text_result(tok, text):
    ids = tok.encode(text, add_special_tokens=True).ids
    plain = tok.encode(text, add_special_tokens=False).ids
    return {
        "ids": ids,
        "ids_plain": plain,
        "decoded": tok.decode(ids, skip_special_tokens=True),
        "decoded_special": tok.decode(ids, skip_special_tokens=False),
        "stream": hf_stream(tok, ids),
    }


def hf_ids_result(tok, ids):
    return {
        "decoded": tok.decode(ids, skip_special_tokens=True),
        "decoded_special": tok.decode(ids, skip_special_tokens=False),
        "stream": hf_stream(tok, ids),
    }


def run_tool(tool, tok_path, inputs, workdir, name):
    in_path = os.path.join(workdir, f"{name}.input.jsonl")
    with open(in_path, "w", encoding="utf-8") as f:
        for x in inputs:
            f.write(json.dumps(x, ensure_ascii=True) + "\n")
    p = subprocess.run([tool, tok_path, in_path, "--jsonl"], capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(f"accel-tokenize failed on {name} ({p.returncode}): "
                           f"{p.stderr.decode('utf-8', 'replace')}")
    out = p.stdout.decode("utf-8").split("\n")
    if out and out[-1] == "":
        out.pop()
    if len(out) != len(inputs) + 1:
        raise RuntimeError(f"accel-tokenize printed {len(out)} lines for {len(inputs)} inputs")
    return json.loads(out[0]), [json.loads(l) for l in out[1:]]


def short(x, n=300):
    s = repr(x)
    return s if len(s) <= n else s[:n] + "..."


def check_config(name, maker, args, lines, texts, cases, workdir):
    j, meta = maker(texts)
    tok_path = os.path.join(workdir, f"{name}.tokenizer.json")
    with open(tok_path, "w", encoding="utf-8") as f:
        json.dump(j, f, ensure_ascii=False)
    tok = Tokenizer.from_file(tok_path)

    contents = [t["content"] for t in j.get("added_tokens", [])]
    text_cases = cases + special_cases(contents) + meta.get("extra", [])
    rng = random.Random(zlib.crc32(name.encode()))
    vocab_n = tok.get_vocab_size()
    id_cases = []
    for _ in range(200):
        k = rng.randint(1, 16)
        id_cases.append([rng.randrange(0, vocab_n + 3) for _ in range(k)])
    # Cut the encodings of some texts anywhere: partial UTF-8 at the end.
    for text in cases[:: max(1, len(cases) // 60)]:
        ids = tok.encode(text, add_special_tokens=False).ids
        if len(ids) > 1:
            a = rng.randrange(0, len(ids))
            b = rng.randrange(a + 1, len(ids) + 1)
            id_cases.append(ids[a:b])

    inputs = [{"text": t} for t in text_cases] + [{"ids": ids} for ids in id_cases]
    header, ours = run_tool(args.tool, tok_path, inputs, workdir, name)

    failures = []
    expected_header = {
        "vocab_size": vocab_n,
        "bos": tok.token_to_id(meta["bos"]) if meta["bos"] else None,
        "eos": tok.token_to_id(meta["eos"]) if meta["eos"] else None,
    }
    for k, v in expected_header.items():
        if header.get(k) != v:
            failures.append(f"{k}: accel {header.get(k)!r}, expected {v!r}")

    corpus_ok = 0
    text_ok = 0
    for i, t in enumerate(text_cases):
        theirs = hf_text_result(tok, t)
        mine = ours[i]
        mine["stream"] = accel_stream(mine)
        bad = [k for k in theirs if mine.get(k) != theirs[k]]
        if "error" in mine:
            bad = ["error"]
        if not bad:
            text_ok += 1
            if i < len(lines):
                corpus_ok += 1
        else:
            msg = [f"text {i} {short(t)}:"]
            for k in bad:
                msg.append(f"    {k}: accel {short(mine.get(k, mine.get('error')))}")
                msg.append(f"    {' ' * len(k)}  hf    {short(theirs.get(k))}")
            failures.append("\n".join(msg))
    ids_ok = 0
    for n, ids in enumerate(id_cases):
        theirs = hf_ids_result(tok, ids)
        mine = ours[len(text_cases) + n]
        mine["stream"] = accel_stream(mine)
        bad = [k for k in theirs if mine.get(k) != theirs[k]]
        if not bad:
            ids_ok += 1
        else:
            msg = [f"ids {short(ids)}:"]
            for k in bad:
                msg.append(f"    {k}: accel {short(mine.get(k))}")
                msg.append(f"    {' ' * len(k)}  hf    {short(theirs.get(k))}")
            failures.append("\n".join(msg))

    print(f"{name:11s} corpus lines {corpus_ok}/{len(lines)}, texts {text_ok}/{len(text_cases)}, "
          f"id sequences {ids_ok}/{len(id_cases)}, vocab {vocab_n}"
          + ("" if not failures else f"  -- {len(failures)} MISMATCHES"))
    for f_ in failures[: (1000 if args.verbose else 15)]:
        print("  " + f_)
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", required=True, help="the accel-tokenize binary")
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.txt"))
    ap.add_argument("--only", default="", help="comma-separated configuration names")
    ap.add_argument("--keep", default="", help="write the files here and keep them")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every mismatch")
    args = ap.parse_args()
    if not os.path.exists(args.tool):
        print(f"check_tokenizer.py: no tool at {args.tool}", file=sys.stderr)
        return 2
    import tokenizers
    print(f"tokenizers {tokenizers.__version__}")

    lines = read_corpus(args.corpus)
    texts = training_texts(lines)
    cases = build_cases(lines, random.Random(1234))
    names = [n for n in args.only.split(",") if n] or list(CONFIGS)
    demo = os.path.join(REPO, "test", "fixtures", "demo", "tokenizer.json")
    if "demo" in names and not os.path.exists(demo) and not args.only:
        print(f"(no {demo}: skipping the demo tokenizer)")
        names.remove("demo")
    for n in names:
        if n not in CONFIGS:
            print(f"check_tokenizer.py: unknown configuration {n!r}; "
                  f"known: {', '.join(CONFIGS)}", file=sys.stderr)
            return 2

    ok = True
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        workdir = args.keep
        for n in names:
            ok &= check_config(n, CONFIGS[n], args, lines, texts, cases, workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="accel-tok-") as workdir:
            for n in names:
                ok &= check_config(n, CONFIGS[n], args, lines, texts, cases, workdir)
    print("all match" if ok else "MISMATCHES (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
