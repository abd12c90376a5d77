//! Places where a text's tokens always split, whatever the text after them: a count can then be
//! taken in parts, the part that changes counted again and the rest known (`results`: a cut
//! result's head and its note, a page and its note).
//!
//! tiktoken's split regex (cl100k_base's and o200k_base's alike) cuts a text into pieces and
//! merges each piece alone, so a count is the sum of its pieces'. A piece that holds a line
//! feed ends with the last line feed of its whitespace run, or with the line feeds after a run
//! of punctuation (o200k_base: line feeds and slashes); no letter, digit or punctuation piece
//! starts with one. So after the last line feed of a run, where what follows is neither `/`
//! nor a line break, a piece starts; and the regex, matching the pieces before it, looks no
//! further than the first character that is not whitespace. Two texts alike up to that
//! character have the same pieces up to that place.

/// If a piece starts at byte `at` of `text` in every text that begins with `text[..end]`: that
/// `end` (past the first character after `at` that is not whitespace).
fn fixed(text: &str, at: usize) -> Option<usize> {
    if at == 0 || text.as_bytes().get(at - 1) != Some(&b'\n') {
        return None;
    }
    let rest = text.get(at..)?;
    if rest.starts_with('/') {
        return None;
    }
    for (i, c) in rest.char_indices() {
        if c == '\n' || c == '\r' {
            return None; // not the run's last line break
        }
        if !c.is_whitespace() {
            return Some(at + i + c.len_utf8());
        }
    }
    None
}

/// The first place after the start of `text` where a piece starts, decided by `text` alone.
pub fn first_fixed(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find('\n') {
        let at = from + i + 1;
        if fixed(text, at).is_some() {
            return Some(at);
        }
        from = at;
    }
    None
}

/// The last place in `text` where a piece starts, decided by `text` alone.
pub fn last_fixed(text: &str) -> Option<usize> {
    let mut to = text.len();
    while let Some(i) = text[..to].rfind('\n') {
        let at = i + 1;
        if fixed(text, at).is_some() {
            return Some(at);
        }
        to = i;
    }
    None
}
