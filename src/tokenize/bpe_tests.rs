use super::*;
use std::sync::OnceLock;

fn o200k() -> &'static Bpe {
    static B: OnceLock<Bpe> = OnceLock::new();
    B.get_or_init(|| Bpe::from_core(tiktoken_rs::o200k_base().unwrap(), tiktoken_rs::O200K_BASE_PAT_STR))
}

fn cl100k() -> &'static Bpe {
    static B: OnceLock<Bpe> = OnceLock::new();
    B.get_or_init(|| Bpe::from_core(tiktoken_rs::cl100k_base().unwrap(), CL100K_BASE_PAT_STR))
}

/// Texts of every kind the split regex and both merges meet: contractions, digits, Unicode
/// letters and marks, emoji, whitespace runs, JSON, and pieces of 100 bytes and more (the heap
/// merge).
fn samples() -> Vec<String> {
    let mut texts: Vec<String> = [
        "",
        "hello world",
        "I'm sure they'll've done it, isn't it? WE'RE HERE.",
        "12345678901234 3.14159 -42 1e10 0x1F",
        "  leading and trailing   \n\n\t\r\n  ",
        "naïve café résumé Ñandú straße ǅemal",
        "日本語のテキストと中文文本 한국어 텍스트",
        "emoji 👩‍👩‍👧‍👦 🇳🇴 ✨🔥 done",
        "mcp__github__create_issue, mcp__github__list_pull_requests, mcp__slack__post_message",
        r#"{"type":"object","properties":{"city":{"type":"string","description":"City name"},"days":{"type":"integer","minimum":1}},"required":["city"]}"#,
        "<|endoftext|> is read as text here",
        "a/b/c\r\n/d//e\n\n\n",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    texts.push("x".repeat(300));
    texts.push("ab".repeat(120));
    texts.push("Supercalifragilisticexpialidocious".repeat(5));
    texts.push("🙂".repeat(40));
    texts.push(" ".repeat(150) + "end");
    texts.push("=".repeat(130));
    texts.push("9".repeat(200));
    texts.push("QmFzZTY0ZW5jb2RlZGRhdGFUaGF0SXNMb25nRW5vdWdoVG9UYWtlVGhlSGVhcFBhdGhPZlRoZU1lcmdl".repeat(3));
    // Pseudo-random strings over a mixed alphabet (a fixed seed: the same cases every run).
    let alphabet: Vec<char> = "aAbBzZ eé日👍0 9_-.,'\n\t{}\"/:ßñ".chars().collect();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for len in (1..400).step_by(3) {
        let s: String = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                alphabet[(seed % alphabet.len() as u64) as usize]
            })
            .collect();
        texts.push(s);
    }
    texts
}

#[test]
fn o200k_counts_equal_tiktokens() {
    let reference = tiktoken_rs::o200k_base_singleton();
    for text in samples() {
        assert_eq!(o200k().count(&text), reference.count_ordinary(&text), "{text:?}");
    }
}

#[test]
fn cl100k_counts_equal_tiktokens() {
    let reference = tiktoken_rs::cl100k_base_singleton();
    for text in samples() {
        assert_eq!(cl100k().count(&text), reference.count_ordinary(&text), "{text:?}");
    }
}

#[test]
fn the_vocabulary_is_copied_without_specials() {
    // o200k_base: 199,998 ordinary tokens; its two specials are not ordinary text.
    assert_eq!(o200k().ranks.len(), 199_998);
    assert!(!o200k().ranks.contains_key(&b"<|endoftext|>"[..]));
    assert_eq!(cl100k().ranks.len(), 100_256);
}

#[test]
fn token_ends_cut_the_text_into_the_counted_tokens() {
    for bpe in [o200k(), cl100k()] {
        for text in samples() {
            let ends = bpe.token_ends(&text);
            assert_eq!(ends.len(), bpe.count(&text), "{text:?}");
            assert!(ends.windows(2).all(|w| w[0] < w[1]), "{text:?}");
            assert_eq!(ends.last().copied().unwrap_or(0), text.len(), "{text:?}");
        }
    }
    // Each token is the bytes tiktoken-rs's own encoder gives, in order.
    let core = tiktoken_rs::o200k_base().unwrap();
    for text in samples() {
        let ends = o200k().token_ends(&text);
        let mut at = 0;
        let pieces: Vec<Vec<u8>> = ends.iter().map(|&e| { let p = text.as_bytes()[at..e].to_vec(); at = e; p }).collect();
        let want: Vec<Vec<u8>> = core.encode_ordinary(&text).into_iter().map(|t| core.decode_bytes(&[t]).unwrap()).collect();
        assert_eq!(pieces, want, "{text:?}");
    }
}
