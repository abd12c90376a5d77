//! What `tests/search_fused.rs` and `benches/fusion.rs` share: both local models (MiniLM and
//! USE-m3) over the fixture catalog, their cached vectors, one query's cosines by each, and the
//! query sets (the dev set and unseen-zh).
#![allow(dead_code)]

use super::embedding;
use super::search_eval::*;
use toolreg::embed::store::dot;
use toolreg::meta::search::{gloss_english_of, SearchDoc, SearchIndex};

/// One query's cosines with every doc, by each model.
pub struct Cos {
    pub minilm: Vec<f32>,
    pub usem3: Vec<f32>,
    /// MiniLM's cosines of the query's English gloss, when it has CJK letters the gloss reads.
    pub glossed: Option<Vec<f32>>,
}

pub struct Models {
    pub minilm: toolreg::embed::onnx::Onnx,
    pub usem3: toolreg::embed::use_m3::UseM3,
}

/// Every doc's vector by each model: MiniLM's, then USE-m3's.
pub type CatalogVectors = (Vec<Vec<f32>>, Vec<Vec<f32>>);

impl Models {
    pub fn catalog(&self, cache: &str, docs: &[SearchDoc]) -> CatalogVectors {
        let texts: Vec<String> = docs.iter().map(SearchDoc::embedding_text).collect();
        let m = embedding::embed_cached(&self.minilm, &format!("eval-{cache}"), &texts);
        let u = embedding::embed_cached_with(&|t| self.usem3.embed_blocking(t), &format!("eval-use-{cache}"), &texts);
        (m, u)
    }

    pub fn query(&self, q: &str, vecs: &CatalogVectors) -> Cos {
        let m = self.minilm.query_blocking(q.to_string()).expect("MiniLM embeds").vectors.remove(0);
        let u = self.usem3.query_blocking(q.to_string()).expect("USE-m3 embeds").vectors.remove(0);
        let glossed = q.chars().any(toolreg::meta::search::is_cjk).then(|| gloss_english_of(q)).flatten().map(|g| {
            let v = self.minilm.query_blocking(g).expect("MiniLM embeds").vectors.remove(0);
            vecs.0.iter().map(|d| dot(&v, d)).collect()
        });
        Cos { minilm: vecs.0.iter().map(|d| dot(&m, d)).collect(), usem3: vecs.1.iter().map(|d| dot(&u, d)).collect(), glossed }
    }
}

/// The rank (from 1) of the query's first gold tool in `ranked`, if there.
pub fn first_gold(docs: &[SearchDoc], ranked: &[usize], q: &DevQuery) -> Option<usize> {
    ranked.iter().position(|&d| q.gold.contains(&key(&docs[d]))).map(|p| p + 1)
}

/// Both models, the fixture catalog, its index and vectors, the dev set and unseen-zh.
pub struct Setup {
    pub models: Models,
    pub docs: Vec<SearchDoc>,
    pub index: SearchIndex,
    pub vecs: CatalogVectors,
    pub dev: Vec<DevQuery>,
    pub unseen: Vec<DevQuery>,
}

pub fn setup() -> Setup {
    let models = Models { minilm: embedding::model(), usem3: embedding::use_model() };
    let docs = load_catalog(&fixtures().join("mcp-catalogs"));
    let index = SearchIndex::build(&docs);
    let vecs = models.catalog("mcp-catalogs", &docs);
    let dev = dev_queries(&docs);
    let unseen = queries_from(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/search/unseen-zh-queries.json"), &docs);
    Setup { models, docs, index, vecs, dev, unseen }
}
