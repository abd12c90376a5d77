//! CJK runs: what counts as one, and the grams a run becomes.

use super::*;
use crate::meta::search_text::split_words;

fn grams(run: &str) -> Vec<String> {
    let mut v = Vec::new();
    cjk_grams(run, |g| v.push(g.to_string()));
    v
}

#[test]
fn a_run_becomes_overlapping_bigrams_and_a_lone_character_itself() {
    assert_eq!(grams("创建分支"), ["创建", "建分", "分支"]);
    assert_eq!(grams("截图"), ["截图"]);
    assert_eq!(grams("图"), ["图"]);
    assert!(grams("").is_empty());
    assert_eq!(grams("スクリーン"), ["スク", "クリ", "リー", "ーン"]);
}

#[test]
fn words_are_cut_where_the_script_changes() {
    let mut v = Vec::new();
    split_words("在GitHub上创建一个新分支，然后push", |w| v.push(w.to_string()));
    assert_eq!(v, ["在", "git", "hub", "上创建一个新分支", "然后", "push"]);
    assert!(is_cjk_word("上创建") && !is_cjk_word("github") && !is_cjk_word("한국어"));
}
