#!/usr/bin/env python3
"""Checks accel's tokenizer against the Hugging Face `tokenizers` package.

  check_tokenizer.py --tool build/bin/accel-tokenize [--corpus corpus.txt]
                     [--heldout heldout.txt] [--only NAME[,NAME...]]
                     [--keep DIR] [-v]

It (a) trains tokenizer.json files with `tokenizers` on the corpus in a
temporary directory -- each model type (byte-level BPE: GPT-2, Llama-3,
Qwen2, RoBERTa, GPT-4o's regex on Oniguruma, regex splits with every
behaviour; SentencePiece-style BPE with byte fallback: Llama-2, Mistral,
Gemma; Unigram: T5-like with NFKC, ALBERT-like with byte fallback;
WordPiece: BERT uncased and cased; BPE with subword prefix/suffix;
WordLevel), the normalizers alone (NFC, NFD, NFKC, NFKD, Lowercase +
StripAccents, BertNormalizer), plus the committed demo tokenizer -- and (b)
encodes and decodes a varied set of texts with both `tokenizers` and
accel-tokenize (test/tokenizer/accel-tokenize.cpp), and compares:

  - ids with and without special tokens (encode(add_special_tokens=...)),
    first on the held-out multilingual lines (heldout.txt, never trained
    on), then on the corpus and the generated texts below,
  - the ids of pairs of texts (encode(a, b)) with and without them,
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


GPT4O_RE = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
            r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+"
            r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}|"
            r" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def add_byte_pieces(j, vocab_key="vocab"):
    """<0x00>..<0xFF> after the other ids of a BPE vocabulary."""
    vocab = j["model"][vocab_key]
    nxt = max([max(vocab.values())] + [t["id"] for t in j["added_tokens"]]) + 1
    for b in range(256):
        name = "<0x%02X>" % b
        if name not in vocab:
            vocab[name] = nxt
            nxt += 1


def make_gpt4o(texts):
    """Byte-level BPE behind the GPT-4o split regex, which no hand-written
    scanner knows: it runs on Oniguruma."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(GPT4O_RE), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(texts, bpe_trainer(1500))
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False)
                            for s in ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]])
    tok.post_processor = processors.TemplateProcessing(
        single="$A <|endoftext|>", pair="$A <|im_start|> $B:1 <|endoftext|>:1",
        special_tokens=[("<|endoftext|>", tok.token_to_id("<|endoftext|>")),
                        ("<|im_start|>", tok.token_to_id("<|im_start|>"))])
    return as_json(tok), dict(bos=None, eos="<|endoftext|>", onig=True)


def make_regex_splits(texts):
    """Oniguruma regexes with every behaviour, invert, empty matches and
    look-around; a regex Replace normalizer and decoder."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Replace(Regex(r"\s{3,}"), "\t")
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\s+"), behavior="removed"),
        pre_tokenizers.Split(Regex(r"[\p{Han}\p{Hiragana}\p{Katakana}]"), behavior="isolated"),
        pre_tokenizers.Split(Regex(r"\d{2}"), behavior="merged_with_previous"),
        pre_tokenizers.Split(Regex(r"(?<=\p{Ll})(?=\p{Lu})"), behavior="isolated"),
        pre_tokenizers.Split(Regex(r"[aeiou]*"), behavior="merged_with_next"),
        pre_tokenizers.Split(Regex(r"\p{P}+"), behavior="contiguous", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.Sequence([decoders.ByteLevel(),
                                     decoders.Replace(Regex(r"(?i)th"), "TH")])
    tok.train_from_iterator(texts, bpe_trainer(900))
    return as_json(tok), dict(bos=None, eos=None, onig=True)


def make_mistral(texts):
    """SentencePiece-style BPE as newer conversions write it: a Metaspace
    pre-tokenizer that does not split, byte fallback, <s> template."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first",
                                                 split=False)
    tok.decoder = decoders.Sequence([decoders.Metaspace(replacement="▁", prepend_scheme="first",
                                                        split=False),
                                     decoders.ByteFallback(), decoders.Fuse()])
    tok.train_from_iterator(texts, bpe_trainer(1100, ["<unk>", "<s>", "</s>"], alphabet=False,
                                               limit_alphabet=130))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A </s> <s> $B:1",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    tok.add_special_tokens([AddedToken("[INST]", special=True, normalized=False),
                            AddedToken("[/INST]", special=True, normalized=False)])
    j = as_json(tok)
    add_byte_pieces(j)
    return j, dict(bos="<s>", eos="</s>")


def make_gemma(texts):
    """Gemma-style: spaces replaced by ▁ in the normalizer, no
    pre-tokenizer (a line is one word), byte fallback, <bos> template."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse()])
    tok.train_from_iterator(texts, bpe_trainer(1300, ["<pad>", "<eos>", "<bos>", "<unk>"],
                                               alphabet=False, limit_alphabet=140))
    tok.add_special_tokens([AddedToken("<start_of_turn>", special=True, normalized=False),
                            AddedToken("<end_of_turn>", special=True, normalized=False)])
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B",
        special_tokens=[("<bos>", tok.token_to_id("<bos>"))])
    j = as_json(tok)
    add_byte_pieces(j)
    return j, dict(bos="<bos>", eos="<eos>")


def unigram_trainer(vocab_size, specials, unk="<unk>"):
    return trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=list(specials),
                                   unk_token=unk, show_progress=False, max_piece_length=12)


def make_t5(texts):
    """T5-like Unigram: NFKC, whitespace runs collapsed, WhitespaceSplit +
    Metaspace, "$A </s>" template."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(),
        pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)])
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.train_from_iterator(texts, unigram_trainer(2500, ["<pad>", "</s>", "<unk>"]))
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B:1 </s>:1",
        special_tokens=[("</s>", tok.token_to_id("</s>"))])
    return as_json(tok), dict(bos=None, eos="</s>")


def make_unigram_bytes(texts):
    """Unigram with byte fallback (ALBERT/XLNet-like normalizers: NFKD,
    StripAccents, Lowercase, Nmt) and a Metaspace pre-tokenizer."""
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.Sequence([normalizers.Nmt(), normalizers.NFKD(),
                                           normalizers.StripAccents(), normalizers.Lowercase(),
                                           normalizers.Strip()])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tok.decoder = decoders.Sequence([decoders.ByteFallback(),
                                     decoders.Metaspace(replacement="▁", prepend_scheme="first")])
    tok.train_from_iterator(texts, unigram_trainer(2500, ["<unk>", "<s>", "</s>"]))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> $B </s>",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))])
    j = as_json(tok)
    vocab = j["model"]["vocab"]
    have = {p for p, _ in vocab}
    low = min(sc for _, sc in vocab) - 1.0
    vocab += [["<0x%02X>" % b, low] for b in range(256) if "<0x%02X>" % b not in have]
    j["model"]["byte_fallback"] = True
    return j, dict(bos="<s>", eos="</s>")


def make_bert(texts):
    """BERT-like uncased WordPiece: BertNormalizer, BertPreTokenizer,
    BertProcessing, WordPiece decoder."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=40))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=1200, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        show_progress=False, limit_alphabet=300))
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    j = as_json(tok)
    for t in j["added_tokens"]:
        if t["content"] == "[MASK]":
            t["lstrip"] = True
    return j, dict(bos="[CLS]", eos=None)


def make_bert_cased(texts):
    """Cased WordPiece with NFKC, BertNormalizer without lowercase or accent
    stripping, Whitespace + Punctuation + Digits, a template with a pair."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", continuing_subword_prefix="##"))
    tok.normalizer = normalizers.Sequence([
        normalizers.NFKC(), normalizers.Strip(),
        normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                   strip_accents=False, lowercase=False)])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Whitespace(), pre_tokenizers.Punctuation(behavior="contiguous"),
        pre_tokenizers.Digits(individual_digits=True)])
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    tok.train_from_iterator(texts, trainers.WordPieceTrainer(
        vocab_size=1000, special_tokens=["[UNK]", "[CLS]", "[SEP]"], show_progress=False,
        limit_alphabet=250))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return as_json(tok), dict(bos="[CLS]", eos=None)


def make_bpe_suffix(texts):
    """Classic (non byte-level) BPE with continuing_subword_prefix and
    end_of_word_suffix, lowercased NFKD text, WhitespaceSplit and a
    BPEDecoder; RobertaProcessing for pairs."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", continuing_subword_prefix="##",
                               end_of_word_suffix="</w>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(),
                                                 pre_tokenizers.CharDelimiterSplit("-")])
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=1200, special_tokens=["<s>", "</s>", "<unk>"], show_progress=False,
        continuing_subword_prefix="##", end_of_word_suffix="</w>", limit_alphabet=200))
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")))
    return as_json(tok), dict(bos="<s>", eos="</s>")


def make_wordlevel(texts):
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.train_from_iterator(texts, trainers.WordLevelTrainer(
        vocab_size=600, special_tokens=["<unk>"], show_progress=False))
    return as_json(tok), dict(bos=None, eos=None)


def compat_texts():
    """Every character whose NFKD differs from its NFD, in runs; and a few
    hundred random strings of cased letters, marks and controls."""
    import unicodedata
    chars = [chr(c) for c in range(0x110000)
             if not 0xD800 <= c <= 0xDFFF and unicodedata.decomposition(chr(c)).startswith("<")]
    texts = ["".join(chars[i:i + 40]) for i in range(0, len(chars), 40)]
    cased = [chr(c) for c in range(0x110000)
             if not 0xD800 <= c <= 0xDFFF and chr(c).lower() != chr(c)]
    texts += ["".join(cased[i:i + 40]) for i in range(0, len(cased), 40)]
    rng = random.Random(7)
    pool = (cased[:400] + list("\t\n\r\x0b\x0c\x00\x01\x1f\x7f\x85\u00ad\u200b\ufeff\ufffd\u2581 ")
            + ["\u0301", "\u0308", "\u0327", "\u20dd", "\u0903", "\u093f"] + list("中文字한국"))
    for _ in range(300):
        texts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 20))))
    return texts


def make_nfkc(_texts):
    return byte_alphabet_json({"type": "NFKC"}), dict(bos=None, eos=None, extra=compat_texts())


def make_nfkd(_texts):
    return byte_alphabet_json({"type": "NFKD"}), dict(bos=None, eos=None, extra=compat_texts())


def make_lowercase(_texts):
    return byte_alphabet_json({"type": "Sequence", "normalizers": [
        {"type": "Lowercase"}, {"type": "StripAccents"}]}), dict(
            bos=None, eos=None, extra=compat_texts())


def make_bertnorm(_texts):
    return byte_alphabet_json({"type": "BertNormalizer", "clean_text": True,
                               "handle_chinese_chars": True, "strip_accents": None,
                               "lowercase": True}), dict(bos=None, eos=None,
                                                         extra=compat_texts())


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
    "gpt4o": make_gpt4o,
    "regex-splits": make_regex_splits,
    "mistral": make_mistral,
    "gemma": make_gemma,
    "t5": make_t5,
    "unigram-bytes": make_unigram_bytes,
    "bert": make_bert,
    "bert-cased": make_bert_cased,
    "bpe-suffix": make_bpe_suffix,
    "wordlevel": make_wordlevel,
    "nfkc": make_nfkc,
    "nfkd": make_nfkd,
    "lowercase": make_lowercase,
    "bertnorm": make_bertnorm,
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


def check_config(name, maker, args, lines, heldout, texts, cases, workdir):
    j, meta = maker(texts)
    tok_path = os.path.join(workdir, f"{name}.tokenizer.json")
    with open(tok_path, "w", encoding="utf-8") as f:
        json.dump(j, f, ensure_ascii=False)
    tok = Tokenizer.from_file(tok_path)

    contents = [t["content"] for t in j.get("added_tokens", [])]
    text_cases = heldout + cases + special_cases(contents) + meta.get("extra", [])
    skipped = 0
    if meta.get("onig"):
        # A general regex runs on the system's Oniguruma (Debian 12: 6.9.8,
        # Unicode 14 data), `tokenizers` on the one it bundles (Unicode 16):
        # characters assigned since Unicode 14 classify differently
        # (docs/tokenizer.md). Skip the random texts holding any.
        import unicodedata
        def old(t):
            return all(unicodedata.category(c) != "Cn" for c in t)
        kept = [t for t in text_cases if old(t)]
        skipped = len(text_cases) - len(kept)
        text_cases = kept
    pair_cases = [(heldout[i], heldout[i + 1]) for i in range(0, len(heldout) - 1, 2)]
    pair_cases += [(lines[i], heldout[i % len(heldout)]) for i in range(0, len(lines), 25)]
    pair_cases += [("", ""), ("", "x"), ("x", ""), (" a ", " b "), ("\n", "\t")]
    pair_cases += [(f"{c} a", f"b {c}") for c in contents]
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

    inputs = ([{"text": t} for t in text_cases] + [{"ids": ids} for ids in id_cases]
              + [{"pair": list(p)} for p in pair_cases])
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
    heldout_ok = 0
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
            if i < len(heldout):
                heldout_ok += 1
            elif i < len(heldout) + len(lines):
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

    pairs_ok = 0
    for n, (a, b) in enumerate(pair_cases):
        mine = ours[len(text_cases) + len(id_cases) + n]
        theirs = {"ids": tok.encode(a, b, add_special_tokens=True).ids,
                  "ids_plain": tok.encode(a, b, add_special_tokens=False).ids}
        bad = [k for k in theirs if mine.get(k) != theirs[k]]
        if not bad:
            pairs_ok += 1
        else:
            msg = [f"pair {short((a, b))}:"]
            for k in bad:
                msg.append(f"    {k}: accel {short(mine.get(k, mine.get('error')))}")
                msg.append(f"    {' ' * len(k)}  hf    {short(theirs.get(k))}")
            failures.append("\n".join(msg))

    print(f"{name:13s} held-out {heldout_ok}/{len(heldout)}, corpus lines {corpus_ok}/{len(lines)}, "
          f"texts {text_ok}/{len(text_cases)}, id sequences {ids_ok}/{len(id_cases)}, "
          f"pairs {pairs_ok}/{len(pair_cases)}, vocab {vocab_n}"
          + (f" ({skipped} texts with characters newer than Unicode 14 skipped)" if skipped else "")
          + ("" if not failures else f"  -- {len(failures)} MISMATCHES"))
    for f_ in failures[: (1000 if args.verbose else 15)]:
        print("  " + f_)
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", required=True, help="the accel-tokenize binary")
    ap.add_argument("--corpus", default=os.path.join(HERE, "corpus.txt"),
                    help="the training text (one text per line)")
    ap.add_argument("--heldout", default=os.path.join(HERE, "heldout.txt"),
                    help="held-out multilingual lines, never trained on")
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
    heldout = read_corpus(args.heldout)
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
            ok &= check_config(n, CONFIGS[n], args, lines, heldout, texts, cases, workdir)
    else:
        with tempfile.TemporaryDirectory(prefix="accel-tok-") as workdir:
            for n in names:
                ok &= check_config(n, CONFIGS[n], args, lines, heldout, texts, cases, workdir)
    print("all match" if ok else "MISMATCHES (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
