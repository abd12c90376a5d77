//! Token counting over tiktoken's vocabularies, in a fifth of the memory.
//!
//! tiktoken-rs's `CoreBPE` keeps a vocabulary three times over (encoder map, decoder map, a
//! sorted token list: ~200,000 small heap allocations each for o200k_base) plus 256 clones of
//! its regex: ~40 MiB resident for o200k_base. Counting needs only "rank of these bytes", so the
//! tokens are copied once into one buffer with one map over slices of it (~8 MiB), and the
//! `CoreBPE` they came from is dropped. The split regex is tiktoken's, and the merge is
//! tiktoken's (tiktoken-rs's `vendor_tiktoken.rs`: the lowest rank merges first, the leftmost on a tie), so a
//! count equals `CoreBPE::count_ordinary`; the tests compare the two.

use fancy_regex::Regex;
use rustc_hash::FxHashMap;
use tiktoken_rs::CoreBPE;

/// tiktoken-rs's cl100k_base split pattern (its `cl100k_base()` does not export it).
pub const CL100K_BASE_PAT_STR: &str =
    "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// Ranks are below this in every encoding we load (o200k_base's specials end at 200,018).
const MAX_RANK: u32 = 1 << 18;

pub struct Bpe {
    /// Ordinary tokens (no specials) by their bytes; the bytes live in one leaked buffer, as
    /// an encoding lives for the whole process.
    ranks: FxHashMap<&'static [u8], u32>,
    regex: Regex,
}

impl Bpe {
    /// Copies `core`'s ordinary tokens and drops it. `pattern` is the split regex `core` was
    /// built with.
    pub fn from_core(core: CoreBPE, pattern: &str) -> Bpe {
        let specials: Vec<Vec<u8>> = core.special_tokens().into_iter().map(|s| s.as_bytes().to_vec()).collect();
        let mut bytes = Vec::new();
        let mut spans = Vec::new();
        for rank in 0..MAX_RANK {
            let Ok(token) = core.decode_bytes(&[rank]) else { continue };
            if specials.contains(&token) {
                continue;
            }
            spans.push((bytes.len(), token.len(), rank));
            bytes.extend_from_slice(&token);
        }
        drop(core);
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let mut ranks = FxHashMap::with_capacity_and_hasher(spans.len(), Default::default());
        ranks.extend(spans.into_iter().map(|(at, len, rank)| (&bytes[at..at + len], rank)));
        crate::os::release_freed_memory();
        Bpe { ranks, regex: Regex::new(pattern).expect("tiktoken's pattern compiles") }
    }

    /// The number of tokens `text` encodes to, special tokens read as ordinary text.
    pub fn count(&self, text: &str) -> usize {
        self.count_until(text, usize::MAX)
    }

    /// The tokens of the pieces of `text` that start before byte `end`.
    pub fn count_until(&self, text: &str, end: usize) -> usize {
        self.regex
            .find_iter(text)
            // As tiktoken: a piece the regex engine cannot match is a bug, not an input error.
            .map(|m| m.expect("tiktoken's pattern matches"))
            .take_while(|m| m.start() < end)
            .map(|m| {
                let piece = m.as_str().as_bytes();
                if self.ranks.contains_key(piece) {
                    1
                } else if piece.len() < 100 {
                    self.merge_small(piece)
                } else {
                    self.merge_large(piece)
                }
            })
            .sum()
    }

    /// Where each token of `text` ends, in bytes, in order (the last is `text.len()`): the
    /// same tokens `count` counts, for cutting text at a token boundary (`results`).
    pub fn token_ends(&self, text: &str) -> Vec<usize> {
        let mut ends = Vec::with_capacity(text.len() / 3 + 1);
        for m in self.regex.find_iter(text) {
            let m = m.expect("tiktoken's pattern matches");
            let (at, piece) = (m.start(), m.as_str().as_bytes());
            if self.ranks.contains_key(piece) || piece.len() == 1 {
                ends.push(at + piece.len());
            } else if piece.len() < 100 {
                let parts = self.small_parts(piece);
                ends.extend(parts[1..].iter().map(|(start, _)| at + start));
            } else {
                let state = self.large_state(piece);
                let mut i = 0;
                while i < state.len() {
                    i = state[i].end;
                    ends.push(at + i);
                }
            }
        }
        ends
    }

    fn rank(&self, bytes: &[u8]) -> u32 {
        self.ranks.get(bytes).copied().unwrap_or(u32::MAX)
    }

    /// tiktoken's `_byte_pair_merge`: parts as (start, rank of the pair starting there).
    fn merge_small(&self, piece: &[u8]) -> usize {
        if piece.len() == 1 {
            return 1;
        }
        self.small_parts(piece).len() - 1
    }

    /// The merged parts of a piece of 2 bytes or more: each token's start, then the end.
    fn small_parts(&self, piece: &[u8]) -> Vec<(usize, u32)> {
        let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
        let mut min = (u32::MAX, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.rank(&piece[i..i + 2]);
            if rank < min.0 {
                min = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, u32::MAX));
        parts.push((piece.len(), u32::MAX));
        let rank_at = |parts: &Vec<(usize, u32)>, i: usize| {
            if i + 3 < parts.len() {
                self.rank(&piece[parts[i].0..parts[i + 3].0])
            } else {
                u32::MAX
            }
        };
        while min.0 != u32::MAX {
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = rank_at(&parts, i - 1);
            }
            parts[i].1 = rank_at(&parts, i);
            parts.remove(i + 1);
            min = (u32::MAX, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, i);
                }
            }
        }
        parts
    }

    /// tiktoken's `_byte_pair_merge_large` (a heap, for long pieces), counting the tokens.
    fn merge_large(&self, piece: &[u8]) -> usize {
        let state = self.large_state(piece);
        let (mut tokens, mut i) = (0, 0);
        while i < state.len() {
            tokens += 1;
            i = state[i].end;
        }
        tokens
    }

    /// The heap merge's final state: from a token's start, `end` is where it ends.
    fn large_state(&self, piece: &[u8]) -> Vec<State> {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;
        let mut state = Vec::with_capacity(piece.len());
        state.push(State { prev: usize::MAX, end: 1, next_end: 2, next_rank: u32::MAX });
        // Lowest rank first, then the leftmost start: tiktoken's `Merge` order.
        let mut heap = BinaryHeap::with_capacity(piece.len());
        for i in 0..piece.len() - 1 {
            let rank = self.rank(&piece[i..i + 2]);
            if rank != u32::MAX {
                heap.push(Reverse((rank, i)));
                state[i].next_rank = rank;
            }
            state.push(State { prev: i, end: i + 2, next_end: i + 3, next_rank: u32::MAX });
        }
        let potential = |state: &mut Vec<State>, heap: &mut BinaryHeap<Reverse<(u32, usize)>>, start: usize, next_end: usize| {
            state[start].next_end = next_end;
            state[start].next_rank = u32::MAX;
            if next_end <= piece.len() {
                let rank = self.rank(&piece[start..next_end]);
                if rank != u32::MAX {
                    heap.push(Reverse((rank, start)));
                    state[start].next_rank = rank;
                }
            }
        };
        while let Some(Reverse((rank, left))) = heap.pop() {
            if rank != state[left].next_rank {
                continue; // invalidated since it was pushed
            }
            let right = state[left].end;
            let right_end = state[left].next_end;
            let right_next_end = state[right].next_end;
            state[left].end = right_end;
            potential(&mut state, &mut heap, left, right_next_end);
            if right_end < state.len() {
                state[right_end].prev = left;
            }
            if left > 0 {
                let prev = state[left].prev;
                potential(&mut state, &mut heap, prev, right_end);
            }
            state[right].next_rank = u32::MAX;
        }
        state
    }
}

/// Per start: where its token ends, where the next one ends, and that pair's rank.
struct State {
    prev: usize,
    end: usize,
    next_end: usize,
    next_rank: u32,
}

#[cfg(test)]
#[path = "bpe_tests.rs"]
mod tests;
