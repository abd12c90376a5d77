#!/usr/bin/env python3
"""Writes a Hugging Face `tokenizer.json` for USE-m3's SentencePiece model, at packaging time.

usage: use-tokenizer.py SP_MODEL OUT_JSON

The model is a unigram one with the `nmt_nfkc` normaliser (its precompiled character map is
carried over as is), a dummy prefix, whitespace escaped to U+2581 and runs of spaces squeezed,
<s> and </s> around every text (as the package's encoder asks its tokenizer for). Run by
scripts/embedding-model.sh with `sentencepiece` and `protobuf` from
tests/embedding/tools-requirements.txt; tests/use_m3.rs checks that the `tokenizers` crate gives
`sentencepiece`'s ids on every fixture catalog and query text.
"""
import base64
import json
import sys

from sentencepiece import sentencepiece_model_pb2 as pb

NORMAL, UNKNOWN, CONTROL, USER_DEFINED = 1, 2, 3, 4


def convert(model_bytes):
    m = pb.ModelProto()
    m.ParseFromString(model_bytes)
    t, n = m.trainer_spec, m.normalizer_spec
    if t.model_type != 1:
        raise SystemExit(f"not a unigram model (model_type {t.model_type})")
    if not (n.add_dummy_prefix and n.escape_whitespaces and n.remove_extra_whitespaces):
        raise SystemExit("unexpected normaliser flags")
    vocab = [[p.piece, p.score] for p in m.pieces]
    added = []
    for i, p in enumerate(m.pieces):
        if p.type in (UNKNOWN, CONTROL, USER_DEFINED):
            special = p.type != USER_DEFINED
            added.append({"id": i, "content": p.piece, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": not special, "special": special})
    bos, eos = m.pieces[t.bos_id].piece, m.pieces[t.eos_id].piece
    space = "\u2581"
    normalizers = [{"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
                   {"type": "Strip", "strip_left": True, "strip_right": True}]
    if n.precompiled_charsmap:
        charsmap = base64.b64encode(n.precompiled_charsmap).decode()
        normalizers.insert(0, {"type": "Precompiled", "precompiled_charsmap": charsmap})
    special = lambda tok, i: {"id": tok, "ids": [i], "tokens": [tok]}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": normalizers},
        "pre_tokenizer": {"type": "Metaspace", "replacement": space, "prepend_scheme": "always", "split": True},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": eos, "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": bos, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": eos, "type_id": 0}}],
            "special_tokens": {bos: special(bos, t.bos_id), eos: special(eos, t.eos_id)},
        },
        "decoder": {"type": "Metaspace", "replacement": space, "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": t.unk_id, "vocab": vocab, "byte_fallback": False},
    }


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1], "rb") as f:
        out = convert(f.read())
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
