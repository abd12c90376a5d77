//! The gloss table: it parses, and the longest word wins.

use super::*;

fn words(run: &str) -> Vec<String> {
    let mut v = Vec::new();
    gloss(run, |w| v.push(w.to_string()));
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
