#!/usr/bin/env python3
"""Generates runtime/serving/tokenizer/UnicodeTables.inc from Python's unicodedata.

The tokenizer needs, without any third-party library:
  - \\p{L} and \\p{N} (general categories L* and N*) for the pre-tokenizer
    regexes of GPT-2 / Llama-3 / Qwen2, which the `tokenizers` package runs
    through Oniguruma;
  - a \\w approximation (L*, M*, Nd, Nl, Pc, ZWNJ/ZWJ) for added tokens with
    `single_word`;
  - canonical combining classes, full canonical decompositions and the
    primary composites, for the NFC / NFD normalizers;
  - with `tokenizers` installed, tables probed from it character by
    character (so that they hold exactly what its Rust crates do, whatever
    their Unicode versions): the full compatibility decompositions of NFKD
    and NFKC, the Lowercase mapping, the marks StripAccents and
    BertNormalizer remove, the characters BertNormalizer's clean_text
    removes, Punctuation's punctuation and the \\w of the Whitespace
    pre-tokenizer (Rust's regex crate).

Run it with the Python whose unicodedata version you want (3.11 has Unicode
14.0.0, the version Oniguruma 6.9.8 inside `tokenizers` uses) and commit the
output:

    python3 runtime/serving/tokenizer/gen_unicode_tables.py > runtime/serving/tokenizer/UnicodeTables.inc

The NFC/NFD of `tokenizers` come from the Rust crate
unicode-normalization-alignments, whose data is older (Unicode 9.0): it does
not know the combining classes and decompositions added since. To normalize
exactly like `tokenizers`, the script asks the installed `tokenizers` package
which of unicodedata's combining classes and decompositions it applies, and
leaves out the others (the header of the output lists them). Without
`tokenizers` (or with --no-tokenizers-compat) it writes plain unicodedata.
"""
import argparse
import sys
import unicodedata

MAX_CP = 0x110000


def ranges(pred):
    out = []
    start = None
    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF:
            ok = False
        else:
            ok = pred(cp)
        if ok and start is None:
            start = cp
        elif not ok and start is not None:
            out.append((start, cp - 1))
            start = None
    if start is not None:
        out.append((start, MAX_CP - 1))
    return out


def cat(cp):
    return unicodedata.category(chr(cp))


def emit_ranges(name, rs, w):
    w(f"// {len(rs)} ranges\n")
    w(f"static const CodeRange {name}[] = {{\n")
    for i in range(0, len(rs), 4):
        w("   " + "".join(f" {{0x{a:X}, 0x{b:X}}}," for a, b in rs[i:i + 4]) + "\n")
    w("};\n\n")


def tokenizers_compat():
    """The code points whose combining class, and those whose canonical
    decomposition, `tokenizers`' normalizers do not apply."""
    from tokenizers import __version__ as version
    from tokenizers import normalizers
    nfd = normalizers.NFD()
    no_class = []
    no_decomp = []
    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        ccc = unicodedata.combining(ch)
        d = unicodedata.decomposition(ch)
        canonical = bool(d) and not d.startswith("<")
        # (The class of a character that decomposes never matters.)
        if ccc and not canonical:
            # A known mark of class c moves before U+0301 (230) when c < 230
            # and after U+0334 (1) when c > 1.
            if ccc < 230:
                known = nfd.normalize_str("a\u0301" + ch) == "a" + ch + "\u0301"
            else:
                known = nfd.normalize_str("a" + ch + "\u0334") == "a\u0334" + ch
            if not known:
                no_class.append(cp)
        if canonical and not 0xAC00 <= cp <= 0xD7A3:
            if nfd.normalize_str(ch) != unicodedata.normalize("NFD", ch):
                no_decomp.append(cp)
    return version, set(no_class), set(no_decomp)


def oniguruma_classes():
    """\\p{L}, \\p{N}, \\s and \\w as the Oniguruma inside `tokenizers` has them
    (its Unicode data is newer than Python's): the code points a Split on
    the class removes."""
    from tokenizers import pre_tokenizers, Regex
    cps = [c for c in range(1, MAX_CP) if not 0xD800 <= c <= 0xDFFF]
    out = {}
    for name, pattern in (("L", r"\p{L}"), ("N", r"\p{N}"), ("s", r"\s"), ("w", r"\w")):
        split = pre_tokenizers.Split(Regex(pattern), "removed")
        kept = set()
        for i in range(0, len(cps), 20000):
            text = "\0".join(chr(c) for c in cps[i:i + 20000])
            for piece, _ in split.pre_tokenize_str(text):
                kept.update(ord(ch) for ch in piece)
        out[name] = set(cps) - kept
    return out


def probe():
    """Tables probed from `tokenizers`, one code point at a time."""
    from tokenizers import normalizers, pre_tokenizers
    nfd = normalizers.NFD()
    nfkd = normalizers.NFKD()
    lower = normalizers.Lowercase()
    strip_accents = normalizers.StripAccents()
    bert_marks = normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False,
                                            strip_accents=True, lowercase=False)
    bert_clean = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=False,
                                            strip_accents=False, lowercase=False)
    punct = pre_tokenizers.Punctuation()
    space = pre_tokenizers.Whitespace()
    out = dict(compat={}, lower={}, mark=set(), mn=set(), clean=set(), punct=set(), word=set())
    for cp in range(1, MAX_CP):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        d = nfd.normalize_str(ch)
        k = nfkd.normalize_str(ch)
        if k != d and not 0xAC00 <= cp <= 0xD7A3:
            out["compat"][cp] = [ord(x) for x in k]
        low = lower.normalize_str(ch)
        if low != ch:
            out["lower"][cp] = [ord(x) for x in low]
        if strip_accents.normalize_str(ch) == "":
            out["mark"].add(cp)
        if d == ch and bert_marks.normalize_str(ch) == "":
            out["mn"].add(cp)
        c = bert_clean.normalize_str(ch)
        if c == "":
            out["clean"].add(cp)
        else:
            # Everything else is kept, White_Space becoming a space.
            assert c == ch or (c == " " and ch.isspace() or cp in (0x1C, 0x1D, 0x1E, 0x1F)), cp
        if len(punct.pre_tokenize_str("a" + ch + "a")) == 3:
            out["punct"].add(cp)
        if [p for p, _ in space.pre_tokenize_str("a" + ch + "a")] == ["a" + ch + "a"]:
            out["word"].add(cp)
    return out


def emit_mapping(name, mapping, w):
    """cp -> code points, as (cp, offset, length) into a pool."""
    pool = []
    rows = []
    for cp in sorted(mapping):
        rows.append((cp, len(pool), len(mapping[cp])))
        pool.extend(mapping[cp])
    assert len(pool) < 65536
    w(f"// {len(rows)} code points mapped into a pool of {len(pool)}\n")
    w(f"static const uint32_t {name}Pool[] = {{\n")
    for i in range(0, len(pool), 8):
        w("   " + "".join(f" 0x{x:X}," for x in pool[i:i + 8]) + "\n")
    w("};\n")
    w(f"static const Decomposition {name}[] = {{\n")
    for i in range(0, len(rows), 4):
        w("   " + "".join(f" {{0x{a:X}, {b}, {c}}}," for a, b, c in rows[i:i + 4]) + "\n")
    w("};\n\n")


def emit_probed(w):
    t = probe()
    in_set = lambda s: (lambda c: c in s)
    w("// Probed from `tokenizers`, one code point at a time (see the script).\n")
    w("// NFKD: the full decomposition of each code point whose NFKD differs from\n")
    w("// its NFD (Hangul syllables are algorithmic).\n")
    emit_mapping("kCompatDecompositions", t["compat"], w)
    w("// Lowercase: each code point that changes, and what it becomes.\n")
    emit_mapping("kLowercase", t["lower"], w)
    w("// The marks StripAccents removes.\n")
    emit_ranges("kMarkRanges", ranges(in_set(t["mark"])), w)
    w("// The non-spacing marks BertNormalizer's strip_accents removes (after NFD).\n")
    emit_ranges("kNonspacingMarkRanges", ranges(in_set(t["mn"])), w)
    w("// What BertNormalizer's clean_text removes (NUL, U+FFFD, controls but\n")
    w("// \\t \\n \\r, format, private use, unassigned in its Unicode data).\n")
    emit_ranges("kBertCleanRanges", ranges(in_set(t["clean"])), w)
    w("// Punctuation (ASCII punctuation and P*) as the Punctuation and Bert\n")
    w("// pre-tokenizers see it.\n")
    emit_ranges("kPunctuationRanges", ranges(in_set(t["punct"])), w)
    w("// \\w of Rust's regex crate, as the Whitespace pre-tokenizer sees it.\n")
    emit_ranges("kRustWordRanges", ranges(in_set(t["word"])), w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-tokenizers-compat", action="store_true")
    args = ap.parse_args()
    no_class, no_decomp = set(), set()
    compat = None
    onig = None
    if not args.no_tokenizers_compat:
        try:
            compat, no_class, no_decomp = tokenizers_compat()
            onig = oniguruma_classes()
        except ImportError:
            print("gen_unicode_tables.py: `tokenizers` is not installed; writing plain "
                  "unicodedata (pass --no-tokenizers-compat to silence this)", file=sys.stderr)

    def combining(cp):
        return 0 if cp in no_class else unicodedata.combining(chr(cp))

    def decomposition(cp):
        return "" if cp in no_decomp else unicodedata.decomposition(chr(cp))

    def full_nfd(cp):
        out = []
        d = decomposition(cp)
        if not d or d.startswith("<"):
            return [cp]
        for part in d.split():
            out += full_nfd(int(part, 16))
        return out

    w = sys.stdout.write
    w("// Generated by runtime/serving/tokenizer/gen_unicode_tables.py from Python's\n")
    w(f"// unicodedata {unicodedata.unidata_version}. Do not edit.\n")
    if compat:
        w(f"// Normalization data as `tokenizers` {compat} applies it: without the\n")
        w(f"// combining classes of {len(no_class)} code points"
          f" ({', '.join('U+%04X' % c for c in sorted(no_class)[:4])}, ...) and the\n")
        w(f"// decompositions of {len(no_decomp)}"
          f" ({', '.join('U+%04X' % c for c in sorted(no_decomp))}), which it does not know.\n")
    w(f"// NOLINTBEGIN\n")
    w(f"#define ACCEL_TOK_UNICODE_VERSION \"{unicodedata.unidata_version}\"\n\n")

    white_space = {0x9, 0xA, 0xB, 0xC, 0xD, 0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F,
                   0x205F, 0x3000} | set(range(0x2000, 0x200B))
    if onig:
        # Unicode.cpp hard-codes White_Space; make sure Oniguruma agrees.
        assert onig["s"] == white_space, sorted(onig["s"] ^ white_space)
        w(f"// \\p{{L}} and \\p{{N}} as Oniguruma in `tokenizers` {compat} classifies them;\n")
        w("// the \\w approximation is Oniguruma's \\w (L, M, Nd, Pc) plus Nl, ZWNJ, ZWJ.\n\n")
        letter = lambda c: c in onig["L"]
        number = lambda c: c in onig["N"]
        word = lambda c: c in onig["w"] or cat(c) == "Nl" or c in (0x200C, 0x200D)
    else:
        letter = lambda c: cat(c)[0] == "L"
        number = lambda c: cat(c)[0] == "N"
        word = lambda c: (cat(c)[0] in "LM" or cat(c) in ("Nd", "Nl", "Pc")
                          or c in (0x200C, 0x200D))
    emit_ranges("kLetterRanges", ranges(letter), w)
    emit_ranges("kNumberRanges", ranges(number), w)
    emit_ranges("kWordRanges", ranges(word), w)

    # Canonical combining classes, as runs of equal non-zero class.
    runs = []
    cur = None
    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF:
            ccc = 0
        else:
            ccc = combining(cp)
        if cur is not None and ccc == cur[2] and cp == cur[1] + 1:
            cur[1] = cp
        else:
            if cur is not None:
                runs.append(tuple(cur))
            cur = [cp, cp, ccc] if ccc else None
    if cur is not None:
        runs.append(tuple(cur))
    w(f"// {len(runs)} runs\n")
    w("static const CombiningClassRange kCombiningClasses[] = {\n")
    for i in range(0, len(runs), 3):
        w("   " + "".join(f" {{0x{a:X}, 0x{b:X}, {c}}}," for a, b, c in runs[i:i + 3]) + "\n")
    w("};\n\n")

    # Full canonical decompositions (Hangul syllables are algorithmic).
    decomps = []
    pool = []
    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF or 0xAC00 <= cp <= 0xD7A3:
            continue
        d = decomposition(cp)
        if not d or d.startswith("<"):
            continue
        # The full decomposition in canonical order (a stable sort by class
        # of each run of marks; the mappings hold starters first).
        full = full_nfd(cp)
        k = 0
        while k < len(full):
            if combining(full[k]) == 0:
                k += 1
                continue
            e = k
            while e < len(full) and combining(full[e]) != 0:
                e += 1
            full[k:e] = sorted(full[k:e], key=combining)
            k = e
        if compat is None:
            assert full == [ord(x) for x in unicodedata.normalize("NFD", chr(cp))]
        decomps.append((cp, len(pool), len(full)))
        pool.extend(full)
    assert len(pool) < 65536
    w(f"// {len(decomps)} canonical decompositions into a pool of {len(pool)} code points\n")
    w("static const uint32_t kDecompositionPool[] = {\n")
    for i in range(0, len(pool), 8):
        w("   " + "".join(f" 0x{x:X}," for x in pool[i:i + 8]) + "\n")
    w("};\n")
    w("static const Decomposition kDecompositions[] = {\n")
    for i in range(0, len(decomps), 4):
        w("   " + "".join(f" {{0x{a:X}, {b}, {c}}}," for a, b, c in decomps[i:i + 4]) + "\n")
    w("};\n\n")

    # Primary composites: a canonical decomposition into exactly two code
    # points that NFC leaves alone (this excludes the composition exclusions,
    # singletons and non-starter decompositions).
    comps = []
    for cp in range(MAX_CP):
        if 0xD800 <= cp <= 0xDFFF or 0xAC00 <= cp <= 0xD7A3:
            continue
        d = decomposition(cp)
        if not d or d.startswith("<"):
            continue
        parts = [int(x, 16) for x in d.split()]
        if len(parts) != 2:
            continue
        if unicodedata.normalize("NFC", chr(cp)) != chr(cp):
            continue  # an exclusion, or a non-starter decomposition
        comps.append((parts[0], parts[1], cp))
    comps.sort()
    w(f"// {len(comps)} primary composites, sorted by (first, second)\n")
    w("static const Composition kCompositions[] = {\n")
    for i in range(0, len(comps), 3):
        w("   " + "".join(f" {{0x{a:X}, 0x{b:X}, 0x{c:X}}}," for a, b, c in comps[i:i + 3]) + "\n")
    w("};\n")
    if compat:
        emit_probed(w)
    w("// NOLINTEND\n")


if __name__ == "__main__":
    main()
