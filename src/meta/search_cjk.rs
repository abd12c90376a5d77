//! Text that is not split by spaces: Chinese and Japanese runs, for `tool_search`'s lexical side.
//!
//! A run of Han or kana characters has no spaces to cut at, so `search_text::split_words` hands
//! it over whole (it cuts only where the script changes: "在GitHub上创建分支" is 在 / github /
//! 上创建分支). Whole, a run is one token that no other text repeats; here it becomes
//! overlapping character bigrams (创建分支 -> 创建 建分 分支), a single character standing
//! alone. Bigrams need no dictionary and miss no word a dictionary lacks (product names,
//! new words); the spurious ones (建分) are rare in a catalog and cost little. Measured against
//! jieba-rs (a segmenter with its dictionary bundled) in docs/benchmarks-history.md "tool_search:
//! Chinese queries, more development data, fusion while embedding (issue 26)".
//!
//! Both the index and the query use the same grams, so a Chinese word in a description meets
//! the same word in a query.

/// A character of a script written without spaces: CJK ideographs (the unified blocks, their
/// extensions and compatibility forms) and Japanese kana. Hangul is written with spaces, so it is
/// split like any other letters.
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF // Hiragana, Katakana
        | 0x3400..=0x4DBF // Extension A
        | 0x4E00..=0x9FFF // Unified Ideographs
        | 0xF900..=0xFAFF // Compatibility Ideographs
        | 0x20000..=0x3FFFF) // Extensions B onwards
}

/// True when `w` (a word from `split_words`) is a CJK run: its first character tells, since
/// `split_words` cuts where the script changes.
pub fn is_cjk_word(w: &str) -> bool {
    w.chars().next().is_some_and(is_cjk)
}

/// The index terms of a CJK run: its overlapping character bigrams, or the character itself when
/// the run is one character long.
pub fn cjk_grams(run: &str, mut f: impl FnMut(&str)) {
    let starts: Vec<usize> = run.char_indices().map(|(i, _)| i).chain([run.len()]).collect();
    if starts.len() <= 3 {
        if !run.is_empty() {
            f(run);
        }
        return;
    }
    for w in starts.windows(3) {
        f(&run[w[0]..w[2]]);
    }
}

#[cfg(test)]
#[path = "search_cjk_tests.rs"]
mod tests;
