//! tool_search with both local models (`search.embeddings: [MiniLM, USE-m3]`), against lexical
//! and MiniLM alone (today's hybrid), on the dev set (both halves), unseen-zh, the Chinese
//! query set and LiveMCPBench; real models, real files (`scripts/embedding-model.sh`).
//!
//! Each model counts for the letters it reads well (issue 41's table: USE-m3 the Chinese signal,
//! MiniLM the English one): USE-m3 reads no Latin letter (`DEFAULT_LATIN_USE_FUSED` = 0), so an
//! English query ranks exactly as with MiniLM alone; USE-m3's weight for CJK letters is chosen
//! here on the dev set's tune half only (R@1 + MRR) and the shipped one must be that choice. A
//! wider grid (USE-m3 reading Latin letters too) is printed for the record, never chosen from.
//! `--nocapture` prints the tables of BENCHMARKS.md "Two local models"; other ways of fusing,
//! for the record, are `cargo bench --bench fusion`'s.

#[path = "support/embedding.rs"]
mod embedding;
#[path = "support/fused_eval.rs"]
mod fused_eval;
#[path = "support/search_eval.rs"]
mod search_eval;

use fused_eval::*;
use search_eval::*;
use serde_json::Value;
use std::collections::BTreeMap;
use toolreg::embed::{DEFAULT_CJK_LOCAL, DEFAULT_CJK_USE, DEFAULT_LATIN_USE_FUSED, DEFAULT_WEIGHT, DEFAULT_WEIGHT_USE_FUSED};
use toolreg::meta::search::{fuse, model_weight_for, Blend, Part, SearchDoc, SearchIndex};

const USE_WEIGHTS: [f32; 8] = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0];
const USE_LATIN: [f32; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// How a query is ranked.
#[derive(Clone, Copy)]
enum Mode {
    Lexical,
    MiniLm,
    UseOnly,
    Fused { weight: f32, latin: f32 },
}

fn rank(index: &SearchIndex, query: &str, c: &Cos, mode: Mode) -> Vec<usize> {
    let hits = match mode {
        Mode::Lexical => index.search(query, None, 10),
        Mode::MiniLm => index.search_blended(query, None, 10, Some(Blend { cosines: &c.minilm, weight: DEFAULT_WEIGHT, cjk: DEFAULT_CJK_LOCAL })),
        Mode::UseOnly => index.search_blended(query, None, 10, Some(Blend { cosines: &c.usem3, weight: DEFAULT_WEIGHT, cjk: DEFAULT_CJK_USE })),
        Mode::Fused { weight, latin } => {
            // As the sidecar fuses them (`meta::search_fuse`): MiniLM as configured alone, USE-m3
            // for the letters it reads, the sum blended at weight 1.
            let parts = [
                Part { cosines: &c.minilm, weight: model_weight_for(query, DEFAULT_WEIGHT, DEFAULT_CJK_LOCAL, 1.0) },
                Part { cosines: &c.usem3, weight: model_weight_for(query, weight, DEFAULT_CJK_USE, latin) },
            ];
            let fused = fuse(&parts, c.minilm.len());
            index.search_blended(query, None, 10, Some(Blend { cosines: &fused, weight: 1.0, cjk: 1.0 }))
        }
    };
    hits.iter().map(|h| h.doc).collect()
}

const SHIPPED: Mode = Mode::Fused { weight: DEFAULT_WEIGHT_USE_FUSED, latin: DEFAULT_LATIN_USE_FUSED };

fn tables(label: &str, docs: &[SearchDoc], index: &SearchIndex, qs: &[DevQuery], cos: &[Cos]) -> BTreeMap<&'static str, BTreeMap<String, Agg>> {
    let mut out = BTreeMap::new();
    for (name, mode) in [("lexical", Mode::Lexical), ("minilm", Mode::MiniLm), ("use", Mode::UseOnly), ("fused", SHIPPED)] {
        let ranks: Vec<Option<usize>> = qs.iter().zip(cos).map(|(q, c)| first_gold(docs, &rank(index, &q.query, c, mode), q)).collect();
        out.insert(name, dev_report(&format!("{label}: {name}"), qs, &ranks));
    }
    out
}

#[test]
fn both_models_fused_read_chinese_and_keep_english() {
    let Setup { models, docs, index, vecs, dev: qs, unseen } = setup();
    let cos: Vec<Cos> = qs.iter().map(|q| models.query(&q.query, &vecs)).collect();

    // USE-m3's weight and Latin share: chosen on the tune half only.
    let objective = |mode: Mode| -> f64 {
        qs.iter().zip(&cos).filter(|(q, _)| q.split == "tune").map(|(q, c)| {
            let s = score_rank(first_gold(&docs, &rank(&index, &q.query, c, mode), q));
            s[0] + s[3]
        }).sum()
    };
    let ucos: Vec<Cos> = unseen.iter().map(|q| models.query(&q.query, &vecs)).collect();
    let mut best = (f64::MIN, 0.0);
    eprintln!("== USE-m3 beside MiniLM: tune-half objective (R@1 + MRR summed), then R@5 of dev zh (both halves) / dev en (both) / unseen-zh, for the record");
    for latin in USE_LATIN {
        let row: Vec<String> = USE_WEIGHTS.iter().map(|&weight| {
            let mode = Mode::Fused { weight, latin };
            let o = objective(mode);
            if latin == DEFAULT_LATIN_USE_FUSED && o > best.0 + 1e-9 {
                best = (o, weight);
            }
            let r5 = |qs: &[DevQuery], cos: &[Cos], lang: &str| {
                let hits: Vec<f64> = qs.iter().zip(cos).filter(|(q, _)| lang == "all" || q.lang == lang).map(|(q, c)| score_rank(first_gold(&docs, &rank(&index, &q.query, c, mode), q))[1]).collect();
                hits.iter().sum::<f64>() / hits.len() as f64
            };
            format!("w={weight}: {o:.2} {:.3}/{:.3}/{:.3}", r5(&qs, &cos, "zh"), r5(&qs, &cos, "en"), r5(&unseen, &ucos, "all"))
        }).collect();
        eprintln!("   latin {latin:<4} {}", row.join("  "));
    }
    eprintln!("   chosen (latin {DEFAULT_LATIN_USE_FUSED}): weight {}; shipped: weight {DEFAULT_WEIGHT_USE_FUSED}", best.1);
    assert_eq!(best.1, DEFAULT_WEIGHT_USE_FUSED, "the shipped weight is the tune half's choice");

    let dev = tables("dev set", &docs, &index, &qs, &cos);
    let un = tables("unseen-zh-queries.json", &docs, &index, &unseen, &ucos);
    let (lmcp_minilm, lmcp_fused) = livemcpbench(&models);

    let at = |t: &BTreeMap<&str, BTreeMap<String, Agg>>, mode: &str, row: &str, k: usize| t[mode].get(row).map_or(f64::NAN, |a| a.mean()[k]);
    // Chinese: USE-m3 is the signal today's main lacks (its hybrid reads a Chinese query by the
    // gloss and dictionary alone). Measured: unseen-zh R@10 0.721 on main (MiniLM hybrid).
    check_floor("fused unseen-zh R@10 above MiniLM's", at(&un, "fused", "both all all", 2), at(&un, "minilm", "both all all", 2) + 0.02);
    for row in ["holdout zh all", "tune zh all"] {
        check_floor(&format!("fused dev {row} R@5 (MiniLM's or more)"), at(&dev, "fused", row, 1), at(&dev, "minilm", row, 1) - 1e-9);
    }
    // English: exactly MiniLM's ranking (USE-m3 reads no Latin letter here).
    for row in ["tune en all", "holdout en all", "both en intent"] {
        for k in [0, 1, 3] {
            check_floor(&format!("fused dev {row} [{k}] (MiniLM's or more)"), at(&dev, "fused", row, k), at(&dev, "minilm", row, k) - 1e-9);
        }
    }
    assert_eq!(dev["fused"]["both en exact"].mean()[0], 1.0, "exact names first");
    check_floor("fused LiveMCPBench any-gold R@5 (MiniLM's or more)", lmcp_fused, lmcp_minilm - 1e-9);
}

/// LiveMCPBench (never used to choose): any gold tool in the top 5, MiniLM hybrid and fused.
fn livemcpbench(models: &Models) -> (f64, f64) {
    let root = fixtures().join("livemcpbench");
    let docs = load_catalog(&root.join("servers"));
    let index = SearchIndex::build(&docs);
    let vecs = models.catalog("livemcpbench", &docs);
    let q = read_json(&root.join("queries.json"));
    let tasks: Vec<&Value> = q["items"].as_array().expect("items").iter().filter(|i| !gold_set(i).is_empty()).collect();
    let cos: Vec<Cos> = tasks.iter().map(|t| models.query(t["query"].as_str().unwrap(), &vecs)).collect();
    eprintln!("-- LiveMCPBench ({} tasks, {} tools): any gold tool", tasks.len(), docs.len());
    let mut r5 = BTreeMap::new();
    for (name, mode) in [("lexical", Mode::Lexical), ("minilm", Mode::MiniLm), ("use", Mode::UseOnly), ("fused", SHIPPED)] {
        let mut any = Agg::default();
        for (t, c) in tasks.iter().zip(&cos) {
            let query = t["query"].as_str().unwrap();
            let gold = gold_set(t);
            let ranked = rank(&index, query, c, mode);
            let found = |k: usize| ranked.iter().take(k).any(|&d| gold.contains(&key(&docs[d])));
            let rr = ranked.iter().position(|&d| gold.contains(&key(&docs[d]))).map_or(0.0, |p| 1.0 / (p + 1) as f64);
            let a = |k: usize| if found(k) { 1.0 } else { 0.0 };
            any.add(a(1), a(5), a(10), rr);
        }
        print_row(name, &any);
        r5.insert(name, any.mean()[1]);
    }
    (r5["minilm"], r5["fused"])
}
