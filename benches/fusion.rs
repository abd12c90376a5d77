//! Other ways of fusing MiniLM and USE-m3 than the shipped one, for the record
//! (docs/benchmarks-history.md "Two local models: USE-m3 beside MiniLM (issue 41)", "Routing: the
//! alternatives tried"): `cargo bench --bench fusion` prints,
//! for each, the dev set's tune-half objective (R@1 + MRR summed, the shipped weight's criterion)
//! and R@1 / R@5 / R@10 of the dev set's Chinese halves, its English queries and unseen-zh.
//! Nothing is chosen here: `tests/search_fused.rs` holds the shipped fusion to the tune half's
//! choice. Real models, real files (`scripts/embedding-model.sh`); vectors cached as the test's.
#![allow(clippy::print_stdout)] // a benchmark reports on stdout

#[path = "../tests/support/embedding.rs"]
mod embedding;
#[path = "../tests/support/fused_eval.rs"]
mod fused_eval;
#[path = "../tests/support/search_eval.rs"]
mod search_eval;

use fused_eval::*;
use search_eval::*;
use toolreg::embed::store::dot;
use toolreg::embed::{DEFAULT_CJK_LOCAL, DEFAULT_CJK_USE, DEFAULT_WEIGHT};
use toolreg::meta::search::{fuse, gloss_english_of, model_weight_for, Blend, Part, SearchIndex};

/// How USE-m3's cosines could enter the fusion, besides the shipped way (raw cosines).
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

/// The tune-half objective (R@1 + MRR summed, as the shipped weight is chosen) and
/// R@1 / R@5 / R@10 of each set for each other way of fusing.
fn main() {
    let Setup { models, docs, index, vecs, dev: qs, unseen } = setup();
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
        println!(
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
