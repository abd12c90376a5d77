//! tool_search with both local models (`search.embeddings: [MiniLM, USE-m3]`), against lexical
//! and MiniLM alone (today's hybrid), on the dev set (both halves), unseen-zh, the Chinese
//! query set and LiveMCPBench; real models, real files (`scripts/embedding-model.sh`).
//!
//! Each model counts for the letters it reads well (issue 41's table: USE-m3 the Chinese signal,
//! MiniLM the English one): USE-m3 reads no Latin letter (`DEFAULT_LATIN_USE_FUSED` = 0), so an
//! English query ranks exactly as with MiniLM alone; USE-m3's weight for CJK letters is chosen
//! here on the dev set's tune half only (R@1 + MRR) and the shipped one must be that choice. A
//! wider grid (USE-m3 reading Latin letters too) is printed for the record, never chosen from.
//! `--nocapture` prints the tables of BENCHMARKS.md "Two local models".

#[path = "support/embedding.rs"]
mod embedding;
#[path = "support/search_eval.rs"]
mod search_eval;

use search_eval::*;
use serde_json::Value;
use std::collections::BTreeMap;
use toolreg::embed::store::dot;
use toolreg::embed::{DEFAULT_CJK_LOCAL, DEFAULT_CJK_USE, DEFAULT_LATIN_USE_FUSED, DEFAULT_WEIGHT, DEFAULT_WEIGHT_USE_FUSED};
use toolreg::meta::search::{fuse, model_weight_for, Blend, Part, SearchDoc, SearchIndex};

const USE_WEIGHTS: [f32; 8] = [0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0];
const USE_LATIN: [f32; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

/// One query's cosines with every doc, by each model.
struct Cos {
    minilm: Vec<f32>,
    usem3: Vec<f32>,
}

struct Models {
    minilm: toolreg::embed::onnx::Onnx,
    usem3: toolreg::embed::use_m3::UseM3,
}

impl Models {
    fn catalog(&self, cache: &str, docs: &[SearchDoc]) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let texts: Vec<String> = docs.iter().map(SearchDoc::embedding_text).collect();
        let m = embedding::embed_cached(&self.minilm, &format!("eval-{cache}"), &texts);
        let u = embedding::embed_cached_with(&|t| self.usem3.embed_blocking(t), &format!("eval-use-{cache}"), &texts);
        (m, u)
    }

    fn query(&self, q: &str, vecs: &(Vec<Vec<f32>>, Vec<Vec<f32>>)) -> Cos {
        let m = self.minilm.query_blocking(q.to_string()).expect("MiniLM embeds").vectors.remove(0);
        let u = self.usem3.query_blocking(q.to_string()).expect("USE-m3 embeds").vectors.remove(0);
        Cos { minilm: vecs.0.iter().map(|d| dot(&m, d)).collect(), usem3: vecs.1.iter().map(|d| dot(&u, d)).collect() }
    }
}

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

fn first_gold(docs: &[SearchDoc], ranked: &[usize], q: &DevQuery) -> Option<usize> {
    ranked.iter().position(|&d| q.gold.contains(&key(&docs[d]))).map(|p| p + 1)
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

/// Both models, the fixture catalog, its index and vectors, the dev set and unseen-zh.
fn setup() -> (Models, Vec<SearchDoc>, SearchIndex, (Vec<Vec<f32>>, Vec<Vec<f32>>), Vec<DevQuery>, Vec<DevQuery>) {
    let models = Models { minilm: embedding::model(), usem3: embedding::use_model() };
    let docs = load_catalog(&fixtures().join("mcp-catalogs"));
    let index = SearchIndex::build(&docs);
    let vecs = models.catalog("mcp-catalogs", &docs);
    let qs = dev_queries(&docs);
    let unseen = queries_from(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/search/unseen-zh-queries.json"), &docs);
    (models, docs, index, vecs, qs, unseen)
}

#[test]
fn both_models_fused_read_chinese_and_keep_english() {
    let (models, docs, index, vecs, qs, unseen) = setup();
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

/// How USE-m3's cosines could enter the fusion, besides the shipped way (raw cosines): for the
/// record (BENCHMARKS.md "Two local models", "Routing"), never chosen from but by the tune half.
#[derive(Clone, Copy, Debug)]
enum Fam {
    Raw,
    /// Standardised over the docs, per query.
    Z,
    /// By USE-m3's rank of the doc: `10 / (10 + rank)`.
    Rank,
}

fn transform(c: &[f32], fam: Fam) -> Vec<f32> {
    match fam {
        Fam::Raw => c.to_vec(),
        Fam::Z => {
            let f: Vec<f32> = c.iter().copied().filter(|x| x.is_finite()).collect();
            let n = f.len().max(1) as f32;
            let m = f.iter().sum::<f32>() / n;
            let sd = (f.iter().map(|x| (x - m) * (x - m)).sum::<f32>() / n).sqrt().max(1e-6);
            c.iter().map(|x| (x - m) / sd).collect()
        }
        Fam::Rank => {
            let mut order: Vec<usize> = (0..c.len()).filter(|&d| c[d].is_finite()).collect();
            order.sort_by(|&a, &b| c[b].total_cmp(&c[a]));
            let mut out = vec![f32::NAN; c.len()];
            for (r, d) in order.into_iter().enumerate() {
                out[d] = 10.0 / (10.0 + r as f32);
            }
            out
        }
    }
}

/// One way of fusing: USE-m3's cosines as `fam` at `weight`; `whole`: the whole query to one
/// model by its main script (CJK share >= 0.3) instead of by shares; `gloss`: MiniLM also
/// reads the query's English gloss (`gloss_english_of`) at this weight times the CJK share.
#[derive(Clone, Copy)]
struct Alt {
    fam: Fam,
    weight: f32,
    whole: bool,
    gloss: f32,
}

fn rank_alt(index: &SearchIndex, query: &str, c: &Cos, glossed: &[f32], alt: Alt) -> Vec<usize> {
    let u = transform(&c.usem3, alt.fam);
    let (mw, uw) = if alt.whole {
        if model_weight_for(query, 1.0, 1.0, 0.0) >= 0.3 { (0.0, alt.weight) } else { (DEFAULT_WEIGHT, 0.0) }
    } else {
        (model_weight_for(query, DEFAULT_WEIGHT, DEFAULT_CJK_LOCAL, 1.0), model_weight_for(query, alt.weight, DEFAULT_CJK_USE, 0.0))
    };
    let gw = alt.gloss * model_weight_for(query, 1.0, 1.0, 0.0);
    let parts = [Part { cosines: &c.minilm, weight: mw }, Part { cosines: &u, weight: uw }, Part { cosines: glossed, weight: gw }];
    let fused = fuse(&parts, c.minilm.len());
    index.search_blended(query, None, 10, Some(Blend { cosines: &fused, weight: 1.0, cjk: 1.0 })).iter().map(|h| h.doc).collect()
}

/// `-- --ignored --nocapture fusion_alternatives`: the tune-half objective (R@1 + MRR summed,
/// as the shipped weight is chosen) and R@1 / R@5 / R@10 of each set for other fusions.
#[test]
#[ignore]
fn fusion_alternatives() {
    use toolreg::meta::search::gloss_english_of;
    let (models, docs, index, vecs, qs, unseen) = setup();
    let glossed = |q: &str| -> Vec<f32> {
        match gloss_english_of(q) {
            Some(g) => {
                let m = models.minilm.query_blocking(g).expect("MiniLM embeds").vectors.remove(0);
                vecs.0.iter().map(|d| dot(&m, d)).collect()
            }
            None => vec![0.0; docs.len()],
        }
    };
    let cos: Vec<(Cos, Vec<f32>)> = qs.iter().map(|q| (models.query(&q.query, &vecs), glossed(&q.query))).collect();
    let ucos: Vec<(Cos, Vec<f32>)> = unseen.iter().map(|q| (models.query(&q.query, &vecs), glossed(&q.query))).collect();
    let n_tune = qs.iter().filter(|q| q.split == "tune").count() as f64;
    let line = |label: String, alt: Alt| {
        let m = |qs: &[DevQuery], cos: &[(Cos, Vec<f32>)], f: &dyn Fn(&DevQuery) -> bool| -> [f64; 4] {
            let mut a = Agg::default();
            for (q, c) in qs.iter().zip(cos).filter(|(q, _)| f(q)) {
                let s = score_rank(first_gold(&docs, &rank_alt(&index, &q.query, &c.0, &c.1, alt), q));
                a.add(s[0], s[1], s[2], s[3]);
            }
            a.mean()
        };
        let tune = m(&qs, &cos, &|q| q.split == "tune");
        let r = |x: [f64; 4]| format!("{:.3}/{:.3}/{:.3}", x[0], x[1], x[2]);
        eprintln!(
            "{label}: tune obj {:.2} | tune zh {} | holdout zh {} | en {} | unseen-zh {}",
            (tune[0] + tune[3]) * n_tune,
            r(m(&qs, &cos, &|q| q.split == "tune" && q.lang == "zh")),
            r(m(&qs, &cos, &|q| q.split == "holdout" && q.lang == "zh")),
            r(m(&qs, &cos, &|q| q.lang == "en")),
            r(m(&unseen, &ucos, &|_| true))
        );
    };
    let grid: [(Fam, &[f32]); 3] = [(Fam::Raw, &[0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]), (Fam::Z, &[0.05, 0.1, 0.2, 0.3, 0.5, 1.0]), (Fam::Rank, &[0.1, 0.25, 0.5, 1.0, 1.5, 2.0])];
    for whole in [false, true] {
        for (fam, ws) in grid {
            for &weight in ws {
                line(format!("whole={whole} {fam:?} w={weight}"), Alt { fam, weight, whole, gloss: 0.0 });
            }
        }
    }
    for gloss in [1.0f32, 2.0, 3.0, 4.0, 6.0] {
        for weight in [0.0f32, 0.5, 1.0, 1.5, 3.0] {
            line(format!("gloss w={gloss} use w={weight}"), Alt { fam: Fam::Raw, weight, whole: false, gloss });
        }
    }
}
