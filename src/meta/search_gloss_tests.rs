//! The gloss table and its dictionary: they parse, the longest word wins, the table first.

use super::*;

fn words(run: &str) -> Vec<String> {
    let mut v = Vec::new();
    gloss_with(run, false, |w| v.push(w.to_string()), |_, _| {});
    v
}

#[test]
fn the_longest_word_wins_and_each_is_glossed_once() {
    assert_eq!(words("新建一个文件夹"), ["create", "new", "folder", "directory"]);
    assert_eq!(words("给这个网页截个图"), ["web", "page", "screenshot"]);
    // Fillers and days are consumed: 一下 is not 下, 会不会 not 会.
    assert_eq!(words("帮我查一下明天北京会不会下雨"), ["search", "weather"]);
    assert_eq!(words("下午三点"), Vec::<String>::new());
    assert!(words("明天北京").is_empty());
    assert!(words("").is_empty());
}

#[test]
fn the_shipped_table_parses_and_bad_lines_are_named() {
    let t = parse(GLOSS_TSV).expect("search_gloss.tsv parses");
    assert!(t.words.len() > 500 && t.max_chars >= 4, "{} words", t.words.len());
    assert!(english_words().len() > 300);
    for (bad, why) in [
        ("截图screenshot\n", "no tab"),
        ("截图\tscreenshot\n截图\tcapture\n", "twice"),
        ("shot\tscreenshot\n", "not a CJK word"),
        ("截图\tscreen  shot\n", "not words"),
    ] {
        let err = parse(bad).err().unwrap_or_default();
        assert!(err.contains(why), "{bad:?}: {err:?}");
    }
}

/// (table words, dictionary words) of `run`.
fn both(run: &str) -> (Vec<String>, Vec<(String, String)>) {
    let (mut t, mut d) = (Vec::new(), Vec::new());
    gloss_with(run, true, |w| t.push(w.to_string()), |zh, en| d.push((zh.to_string(), en.to_string())));
    (t, d)
}

#[test]
fn the_dictionary_takes_what_the_table_leaves() {
    // 字段 (field) is not in the table: the dictionary glosses it; 截图 is, and only the table speaks.
    let (t, d) = both("截图字段");
    assert_eq!(t, ["screenshot"]);
    assert_eq!(d, [("字段".to_string(), "field".to_string())]);
    // Before, between and after table words, longest word first; a table word always wins,
    // even inside a longer dictionary word (看板 is the table's 看 and the dictionary's 板).
    let (t, d) = both("字段截图看板文件");
    assert_eq!(t, ["screenshot", "view", "file"]);
    let zh: Vec<&str> = d.iter().map(|(z, _)| z.as_str()).collect();
    assert_eq!(zh, ["字段", "板"]);
    // Off, it is never asked; a run the table covers whole never reaches it either.
    let mut asked = false;
    gloss_with("看板字段", false, |_| {}, |_, _| asked = true);
    assert!(!asked);
    assert!(both("截图").1.is_empty());
}

#[test]
fn the_shipped_dictionary_parses() {
    let d = parse(DICT_TSV).expect("search_dict.tsv parses");
    assert!(d.words.len() > 50_000 && d.max_chars == 4, "{} words, {} chars", d.words.len(), d.max_chars);
    assert_eq!(d.words.get("字段"), Some(&"field"));
}

#[test]
fn english_of_a_query_glosses_its_cjk_runs_and_keeps_the_rest() {
    assert_eq!(english_of("create a branch"), None, "no CJK letter");
    let g = english_of("在GitHub上创建分支").expect("glossed");
    assert!(g.contains("GitHub"), "{g}");
    assert!(!g.chars().any(super::super::search_cjk::is_cjk), "{g}");
}
