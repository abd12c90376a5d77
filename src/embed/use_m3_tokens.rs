//! USE-m3's tokenizer: the converted `tokenizer.json`'s normaliser and pre-tokeniser (the
//! `tokenizers` crate's own, so the text is cut as before), and its unigram model as a plain
//! map from piece to id with a Viterbi search over each word, as the crate's
//! `Unigram::encode_optimized` does (sentencepiece's `EncodeOptimized`).
//!
//! Why not the crate's `Unigram`: with USE-m3's 128,000 pieces its byte trie (a hash map per
//! node) keeps 143 MiB resident, more than the network itself; this map keeps about 10
//! (docs/benchmarks-history.md "Two local models: USE-m3 beside MiniLM (issue 41)", its "Cost").
//! Control pieces (`<unk>`, `<s>`, `</s>`) are
//! never matched in a text, as in sentencepiece; a run of unknown characters is one `<unk>`.

use std::collections::HashMap;
use std::path::Path;
use tokenizers::{NormalizedString, Normalizer, NormalizerWrapper, OffsetReferential, OffsetType, PreTokenizedString, PreTokenizer, PreTokenizerWrapper};

/// sentencepiece's penalty of an unknown character below the lowest piece's score.
const UNK_PENALTY: f64 = 10.0;

#[derive(serde::Deserialize)]
struct File {
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    added_tokens: Vec<Added>,
    model: Unigram,
    post_processor: serde_json::Value,
}

#[derive(serde::Deserialize)]
struct Added {
    id: u32,
    special: bool,
}

#[derive(serde::Deserialize)]
struct Unigram {
    #[serde(rename = "type")]
    kind: String,
    unk_id: u32,
    vocab: Vec<(String, f64)>,
}

pub struct UseTokenizer {
    normalizer: Option<NormalizerWrapper>,
    pre_tokenizer: Option<PreTokenizerWrapper>,
    /// Every piece a text may be cut into, by its text.
    ids: HashMap<Box<str>, u32>,
    scores: Vec<f64>,
    /// The longest piece, in bytes.
    longest: usize,
    unk: u32,
    /// The ids around every text (`<s>`, `</s>`).
    bos: u32,
    eos: u32,
    unk_score: f64,
}

impl UseTokenizer {
    pub fn load(path: &Path) -> Result<UseTokenizer, String> {
        let bad = |e: String| format!("bad tokenizer {}: {e}", path.display());
        let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let f: File = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
        drop(bytes);
        if f.model.kind != "Unigram" {
            return Err(bad(format!("a {} model, not a unigram one", f.model.kind)));
        }
        let special_id = |tok: &str| f.post_processor["special_tokens"][tok]["ids"][0].as_u64().map(|i| i as u32);
        let (Some(bos), Some(eos)) = (special_id("<s>"), special_id("</s>")) else {
            return Err(bad("no <s> and </s> in its post-processor".into()));
        };
        let control: Vec<u32> = f.added_tokens.iter().filter(|a| a.special).map(|a| a.id).collect();
        let n = f.model.vocab.len();
        if f.model.unk_id as usize >= n || bos as usize >= n || eos as usize >= n {
            return Err(bad("a special id past the vocabulary".into()));
        }
        let min = f.model.vocab.iter().map(|v| v.1).fold(f64::INFINITY, f64::min);
        let mut ids = HashMap::with_capacity(n);
        let mut scores = Vec::with_capacity(n);
        let mut longest = 0;
        for (id, (piece, score)) in f.model.vocab.into_iter().enumerate() {
            scores.push(score);
            if control.contains(&(id as u32)) || piece.is_empty() {
                continue;
            }
            longest = longest.max(piece.len());
            ids.entry(piece.into_boxed_str()).or_insert(id as u32);
        }
        Ok(UseTokenizer {
            normalizer: f.normalizer,
            pre_tokenizer: f.pre_tokenizer,
            ids,
            scores,
            longest,
            unk: f.model.unk_id,
            bos,
            eos,
            unk_score: min - UNK_PENALTY,
        })
    }

    /// Token ids as the model reads them: <s>, the text's pieces, </s>, cut at `cap` in all.
    pub fn ids(&self, text: &str, cap: usize) -> Result<Vec<u32>, String> {
        let mut normalized = NormalizedString::from(text);
        if let Some(n) = &self.normalizer {
            n.normalize(&mut normalized).map_err(|e| format!("cannot normalise: {e}"))?;
        }
        let mut words = PreTokenizedString::from(normalized);
        if let Some(p) = &self.pre_tokenizer {
            p.pre_tokenize(&mut words).map_err(|e| format!("cannot pre-tokenise: {e}"))?;
        }
        let mut out = vec![self.bos];
        for (word, _, _) in words.get_splits(OffsetReferential::Normalized, OffsetType::Byte) {
            self.viterbi(word, &mut out);
        }
        out.push(self.eos);
        if out.len() > cap && cap >= 2 {
            out.truncate(cap - 1);
            out.push(self.eos);
        }
        Ok(out)
    }

    /// The best cut of `word` by summed scores, its ids appended to `out`.
    fn viterbi(&self, word: &str, out: &mut Vec<u32>) {
        // best[end]: (score of the best path ending at byte `end`, where its last piece starts, its id).
        let size = word.len();
        let mut best: Vec<(f64, Option<usize>, u32)> = vec![(0.0, None, 0); size + 1];
        let mut start = 0;
        while start < size {
            let here = best[start].0;
            let first = word[start..].chars().next().map_or(1, char::len_utf8);
            let mut single = false;
            let mut end = start + first;
            while end <= size && end - start <= self.longest {
                if let Some(&id) = self.ids.get(&word[start..end]) {
                    let s = here + self.scores[id as usize];
                    let t = &mut best[end];
                    if t.1.is_none() || s > t.0 {
                        *t = (s, Some(start), id);
                    }
                    single |= end - start == first;
                }
                end += word[end..].chars().next().map_or(1, char::len_utf8);
            }
            if !single {
                let s = here + self.unk_score;
                let t = &mut best[start + first];
                if t.1.is_none() || s > t.0 {
                    *t = (s, Some(start), self.unk);
                }
            }
            start += first;
        }
        let at = out.len();
        let mut end = size;
        while end > 0 {
            let (_, from, id) = best[end];
            let from = from.expect("every char boundary is reached");
            // A run of unknown characters is one <unk>.
            if !(id == self.unk && out.len() > at && out[out.len() - 1] == self.unk) {
                out.push(id);
            }
            end = from;
        }
        out[at..].reverse();
    }
}
