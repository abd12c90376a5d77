//! Document vectors by content, for one model, and their file in `cacheDir`.
//!
//! The key is the first 16 bytes of the SHA-256 of the embedded text, so a tool whose text did
//! not change keeps its vector across syncs and restarts, whatever its name or server. The file
//! is binary (a 4-byte float per dimension: 3.8 MB for 2,422 tools at 384 dimensions) and
//! written atomically; a file that is short, foreign or of another layout is ignored.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

pub type Key = [u8; 16];

pub fn key(text: &str) -> Key {
    let d = Sha256::digest(text.as_bytes());
    let mut k = [0u8; 16];
    k.copy_from_slice(&d[..16]);
    k
}

/// In eight running sums: one float sum is a chain of dependent adds that the compiler may not
/// reorder, one add at a time; eight lanes become SIMD (9x faster at 384 dimensions).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    let mut lanes = [0f32; 8];
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// `v` scaled to length 1 (a zero vector stays zero), so that a dot product is the cosine.
pub fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let n = dot(&v, &v).sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
    v
}

/// Keys are SHA-256 bytes already: folded as they are, they are a good hash, and a search
/// looks up every tool of its pool (SipHash was a fifth of the cosine step).
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        for c in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            self.0 = self.0.rotate_left(5) ^ u64::from_le_bytes(w);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// At most this many vectors are kept (tools come and go; the oldest go first).
const MAX_VECTORS: usize = 200_000;
const MAGIC: &[u8; 8] = b"TRGEMB1\n";

#[derive(Default)]
pub struct Vectors {
    model: Option<String>,
    dim: usize,
    by_key: HashMap<Key, Box<[f32]>, BuildHasherDefault<KeyHasher>>,
    /// Insertion order, for eviction.
    order: std::collections::VecDeque<Key>,
    unsaved: usize,
}

impl Vectors {
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    pub fn dim(&self) -> Option<usize> {
        self.model.as_ref().map(|_| self.dim)
    }

    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    pub fn get(&self, k: &Key) -> Option<&[f32]> {
        self.by_key.get(k).map(|v| &**v)
    }

    /// Forgets every vector: they belong to another model.
    pub fn reset(&mut self, model: &str, dim: usize) {
        *self = Vectors { model: Some(model.to_string()), dim, unsaved: 1, ..Default::default() };
    }

    /// Stores a vector of the current model (of its dimension: checked by the caller).
    pub fn insert(&mut self, k: Key, v: Vec<f32>) {
        if self.by_key.insert(k, v.into_boxed_slice()).is_none() {
            self.order.push_back(k);
        }
        while self.order.len() > MAX_VECTORS {
            if let Some(old) = self.order.pop_front() {
                self.by_key.remove(&old);
            }
        }
        self.unsaved += 1;
    }

    pub fn unsaved(&self) -> usize {
        self.unsaved
    }

    pub fn mark_saved(&mut self) {
        self.unsaved = 0;
    }

    /// MAGIC, model length (u32 LE) and model, dimension (u32), count (u64), then per vector
    /// its key and `dim` f32 LE.
    pub fn encode(&self) -> Vec<u8> {
        let model = self.model.as_deref().unwrap_or("");
        let mut b = Vec::with_capacity(32 + model.len() + self.order.len() * (16 + 4 * self.dim));
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&(model.len() as u32).to_le_bytes());
        b.extend_from_slice(model.as_bytes());
        b.extend_from_slice(&(self.dim as u32).to_le_bytes());
        b.extend_from_slice(&(self.order.len() as u64).to_le_bytes());
        for k in &self.order {
            b.extend_from_slice(k);
            for x in &*self.by_key[k] {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
        b
    }

    pub fn decode(b: &[u8]) -> Option<Vectors> {
        let mut r = Reader(b);
        if r.take(8)? != MAGIC {
            return None;
        }
        let mlen = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
        let model = std::str::from_utf8(r.take(mlen)?).ok()?.to_string();
        let dim = u32::from_le_bytes(r.take(4)?.try_into().ok()?) as usize;
        let count = u64::from_le_bytes(r.take(8)?.try_into().ok()?) as usize;
        // The length must be exact: a torn or padded file is not trusted.
        if dim == 0 || model.is_empty() || count > MAX_VECTORS || r.0.len() != count.checked_mul(16 + 4 * dim)? {
            return None;
        }
        let mut v = Vectors { model: Some(model), dim, ..Default::default() };
        for _ in 0..count {
            let k: Key = r.take(16)?.try_into().ok()?;
            let vec: Vec<f32> = r.take(4 * dim)?.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
            if vec.iter().any(|x| !x.is_finite()) {
                return None;
            }
            v.insert(k, vec);
        }
        v.unsaved = 0;
        Some(v)
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
}

/// The stored vectors, or none when the file is missing, unreadable or not ours (logged).
pub fn load(path: &Path) -> Option<Vectors> {
    let bytes = std::fs::read(path).ok()?;
    let v = Vectors::decode(&bytes);
    if v.is_none() {
        tracing::warn!(path = %path.display(), "embedding cache unreadable: ignored, it will be rebuilt");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vectors {
        let mut v = Vectors::default();
        v.reset("m", 3);
        v.insert(key("a"), normalised(vec![1.0, 2.0, 2.0]));
        v.insert(key("b"), normalised(vec![0.0, 0.0, 5.0]));
        v
    }

    #[test]
    fn dot_in_lanes_is_the_plain_sum() {
        for n in [0, 1, 7, 8, 9, 384, 389] {
            let a: Vec<f32> = (0..n).map(|i| ((i * 7 % 13) as f32 - 6.0) / 5.0).collect();
            let b: Vec<f32> = (0..n).map(|i| ((i * 5 % 11) as f32 - 5.0) / 3.0).collect();
            let plain: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(*x) * f64::from(*y)).sum();
            assert!((f64::from(dot(&a, &b)) - plain).abs() < 1e-3, "n = {n}: {} vs {plain}", dot(&a, &b));
        }
    }

    #[test]
    fn round_trip() {
        let v = sample();
        let back = Vectors::decode(&v.encode()).expect("decodes");
        assert_eq!(back.model(), Some("m"));
        assert_eq!(back.len(), 2);
        assert_eq!(back.get(&key("a")).unwrap(), &[1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0]);
        assert_eq!(back.unsaved(), 0);
    }

    #[test]
    fn torn_foreign_or_odd_files_are_refused() {
        let b = sample().encode();
        for cut in [0, 7, 8, 20, b.len() - 1] {
            assert!(Vectors::decode(&b[..cut]).is_none(), "cut at {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert!(Vectors::decode(&longer).is_none());
        let mut foreign = b.clone();
        foreign[0] = b'X';
        assert!(Vectors::decode(&foreign).is_none());
        let mut nan = b.clone();
        let at = nan.len() - 4;
        nan[at..].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(Vectors::decode(&nan).is_none());
    }

    #[test]
    fn cosine_of_normalised_vectors() {
        let a = normalised(vec![3.0, 4.0]);
        assert!((dot(&a, &a) - 1.0).abs() < 1e-6);
        assert_eq!(normalised(vec![0.0, 0.0]), vec![0.0, 0.0]);
    }
}
