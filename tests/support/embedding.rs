//! The real embedding model of the semantic tool_search tests (all-MiniLM-L6-v2 int8 in ONNX),
//! fetched by `scripts/embedding-model.sh` into `<checkout>/target/embedding`: one place for the
//! script, these tests, both clients' tests and `scripts/package.sh`, whatever `CARGO_TARGET_DIR`
//! is (the product's own `$TOOLREG_EMBEDDING_DIR` is not read here: a user's setting would make
//! these tests use another model than the clients' tests).
#![allow(dead_code)]

use std::path::PathBuf;
use toolreg::embed::onnx::{Onnx, OnnxPaths};
use toolreg::embed::store::{self, Vectors};

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/embedding")
}

pub fn paths() -> OnnxPaths {
    let d = dir();
    let p = OnnxPaths { model: d.join("model.onnx"), tokenizer: d.join("tokenizer.json"), runtime: Some(d.join("libonnxruntime.so")) };
    if let Err((field, e)) = p.check() {
        panic!("the embedding model is missing ({field}: {e}): run scripts/embedding-model.sh first");
    }
    p
}

pub fn model() -> Onnx {
    Onnx::start(paths())
}

/// Vectors for `texts`, in order, with the model; kept in `target/embedding/<name>.bin` by text,
/// so that a rerun embeds only what changed (the product's own store format).
pub fn embed_cached(onnx: &Onnx, name: &str, texts: &[String]) -> Vec<Vec<f32>> {
    let file = dir().join(format!("{name}.bin"));
    let mut v = store::load(&file).unwrap_or_default();
    // Vectors of another model (or of texts cut elsewhere) are not reused.
    let model = onnx.embed_blocking(vec!["which model".into()]).expect("the model embeds").model;
    if v.model() != Some(model.as_str()) {
        v = Vectors::default();
    }
    let missing: Vec<&String> = texts.iter().filter(|t| v.get(&store::key(t)).is_none()).collect();
    if !missing.is_empty() {
        let started = std::time::Instant::now();
        for chunk in missing.chunks(16) {
            let e = onnx.embed_blocking(chunk.iter().map(|s| s.to_string()).collect()).expect("the model embeds");
            if v.model() != Some(e.model.as_str()) {
                v.reset(&e.model, e.vectors[0].len());
            }
            for (t, vec) in chunk.iter().zip(e.vectors) {
                v.insert(store::key(t), vec);
            }
        }
        eprintln!("embedded {} texts in {:.1} s", missing.len(), started.elapsed().as_secs_f64());
        let _ = std::fs::write(&file, v.encode());
    }
    texts.iter().map(|t| v.get(&store::key(t)).expect("embedded").to_vec()).collect()
}

pub fn fresh() -> Vectors {
    Vectors::default()
}
