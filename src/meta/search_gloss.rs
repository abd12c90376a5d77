//! A Chinese -> English gloss of the words people use to ask for a tool, query side only.
//!
//! Tool catalogs are written in English, so a Chinese request ("给这个网页截个图") shares no
//! word with the tool that serves it (`browser_take_screenshot`); bigrams (`search_cjk`) match
//! only the rare Chinese description. The gloss adds the English of the request's words as
//! ordinary query words. Its table (`search_gloss.tsv`) is built from the catalog side: the most
//! frequent content words of the 2,422 fixture tools (verbs, everyday objects of tools), each
//! with the Chinese a user types for it, plus the fillers of asking (帮我, 一下, 会不会) that are
//! consumed and add nothing. It names no product or server and never touches the index. Its
//! effect, on queries written before and after it, is in docs/benchmarks-history.md "tool_search:
//! Chinese queries, more development data, fusion while embedding (issue 26)".
//!
//! Matching is greedy longest-first along the run (文件夹 before 文件, 一下 before 下), so a
//! word is glossed once; the run's bigrams stay in the query beside the gloss. Where the table
//! has no word, a dictionary (CC-CEDICT, `search_dict.tsv`) is asked the same way: a
//! dictionary's senses are many and general ("约": weigh, balance, appointment), so its words
//! count less than the table's (`SearchParams::dictionary_weight`).

use std::collections::HashMap;
use std::sync::OnceLock;

/// The table: `WORD<TAB>english words`, or `WORD<TAB>-` for a word consumed with no English;
/// `#` starts a comment line.
const GLOSS_TSV: &str = include_str!("search_gloss.tsv");

/// The dictionary behind it, same format: CC-CEDICT's simplified words (1-4 characters) with
/// the content words of their first two senses (`scripts/make_search_dict.py`; CC BY-SA 4.0,
/// see the file's head). 100k words: it reaches words the table lacks (字段, 副本, 集合).
const DICT_TSV: &str = include_str!("search_dict.tsv");

#[derive(Default)]
struct Table {
    /// Chinese word -> English words ("" for a consumed filler).
    words: HashMap<&'static str, &'static str>,
    /// The longest key, in characters.
    max_chars: usize,
}

/// The table parsed, or why a line is wrong.
fn parse(tsv: &'static str) -> Result<Table, String> {
    let mut t = Table::default();
    for (n, line) in tsv.lines().enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, en) = line.split_once('\t').ok_or_else(|| format!("line {}: no tab", n + 1))?;
        let en = if en == "-" { "" } else { en };
        if key.is_empty() || key.chars().any(|c| !super::search_cjk::is_cjk(c)) {
            return Err(format!("line {}: key {key:?} is not a CJK word", n + 1));
        }
        if !en.is_empty() && en.split(' ').any(str::is_empty) {
            return Err(format!("line {}: English {en:?} is not words split by one space", n + 1));
        }
        if t.words.insert(key, en).is_some() {
            return Err(format!("line {}: key {key:?} twice", n + 1));
        }
        t.max_chars = t.max_chars.max(key.chars().count());
    }
    Ok(t)
}

/// The shipped table. A malformed table (a unit test rules it out) glosses nothing rather than
/// failing the search.
fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| parse(GLOSS_TSV).unwrap_or_default())
}

/// The dictionary, parsed on the first Chinese query (a malformed one glosses nothing).
fn dictionary() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| parse(DICT_TSV).unwrap_or_default())
}

/// Every English word the gloss can add, each once (for the check that the catalogs use them).
pub fn english_words() -> Vec<&'static str> {
    let mut v: Vec<&str> = table().words.values().flat_map(|en| en.split(' ')).filter(|w| !w.is_empty()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The English words of the table's words in a CJK `run`, greedy longest-first from its start,
/// in order; with `use_dict`, the dictionary's words where the table has none: at each
/// point the table's longest word, else the dictionary's, so a table word always wins (a
/// dictionary word could swallow it: 看板 is the table's 看, view, and a stray 板; chosen on the
/// unseen queries' tune half, docs/benchmarks-history.md "tool_search: Chinese queries, more
/// development data, fusion while embedding (issue 26)"). `dict(word, english)` gets each
/// dictionary word.
pub fn gloss_with(run: &str, use_dict: bool, mut f: impl FnMut(&str), mut dict: impl FnMut(&str, &str)) {
    let t = table();
    let starts: Vec<usize> = run.char_indices().map(|(i, _)| i).chain([run.len()]).collect();
    let mut i = 0;
    while i + 1 < starts.len() {
        if let Some((n, en)) = longest(t, run, &starts, i) {
            en.split(' ').filter(|w| !w.is_empty()).for_each(&mut f);
            i += n;
        } else if let Some((n, en)) = use_dict.then(|| longest(dictionary(), run, &starts, i)).flatten() {
            dict(&run[starts[i]..starts[i + n]], en);
            i += n;
        } else {
            i += 1;
        }
    }
}

/// `query` with each CJK run replaced by its English (the table's words, else the dictionary's
/// first sense), the rest kept: what an English-only model reads of a Chinese request
/// (`search_fuse`). `None` when the query has no CJK letter or nothing of it is glossed.
pub fn english_of(query: &str) -> Option<String> {
    let mut out = String::new();
    let (mut run, mut glossed) = (String::new(), false);
    let flush = |run: &mut String, out: &mut String, glossed: &mut bool| {
        if run.is_empty() {
            return;
        }
        let words = std::cell::RefCell::new(Vec::<String>::new());
        gloss_with(run, true, |en| words.borrow_mut().push(en.to_string()), |_, en| words.borrow_mut().extend(en.split(' ').find(|w| !w.is_empty()).map(String::from)));
        let words = words.into_inner();
        if !words.is_empty() {
            *glossed = true;
            out.push(' ');
            out.push_str(&words.join(" "));
            out.push(' ');
        }
        run.clear();
    };
    for c in query.chars() {
        if super::search_cjk::is_cjk(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out, &mut glossed);
            out.push(c);
        }
    }
    flush(&mut run, &mut out, &mut glossed);
    glossed.then(|| out.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The longest word of `t` at character `i` of `run`: its length in characters and its English.
fn longest(t: &Table, run: &str, starts: &[usize], i: usize) -> Option<(usize, &'static str)> {
    (1..=t.max_chars.min(starts.len() - 1 - i)).rev().find_map(|n| t.words.get(&run[starts[i]..starts[i + n]]).map(|en| (n, *en)))
}

#[cfg(test)]
#[path = "search_gloss_tests.rs"]
mod tests;
