//! NumPy's `.npz` archives, read: a zip of `.npy` arrays (stored or deflated), each a little
//! header (dtype, shape, order) and its data. Enough for USE-m3's `weights.npz`: little-endian
//! `u1`, `i1`, `f4` and `f8` arrays in C order, each read when asked for. Every defect is an error naming the file and the
//! array, never a panic: the file is the user's.

use std::collections::HashMap;
use std::path::Path;

/// One array: its shape and its values as read (floats widened or kept, bytes kept).
#[derive(Debug)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: Data,
}

#[derive(Debug)]
pub enum Data {
    U8(Vec<u8>),
    F32(Vec<f32>),
}

/// An archive open for reading: its directory read, each array read from the file (at its
/// offset) and inflated only when asked for, so that loading holds one array at a time.
pub struct Archive {
    file: std::fs::File,
    path: std::path::PathBuf,
    entries: HashMap<String, Entry>,
}

impl Archive {
    pub fn open(path: &Path) -> Result<Archive, String> {
        let file = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let len = file.metadata().map_err(|e| format!("cannot read {}: {e}", path.display()))?.len();
        let listed = directory(&file, len).map_err(|e| format!("{} is not a .npz archive: {e}", path.display()))?;
        let entries = listed.into_iter().map(|e| (e.name.strip_suffix(".npy").unwrap_or(&e.name).to_string(), e)).collect();
        Ok(Archive { file, path: path.to_path_buf(), entries })
    }

    /// The array `name` (`q1`, `proj2`: the entry name less `.npy`), read and checked now.
    pub fn array(&self, name: &str) -> Result<Array, String> {
        let entry = self.entries.get(name).ok_or_else(|| format!("{}: the weights have no array {name}", self.path.display()))?;
        let raw = entry.data(&self.file).map_err(|e| format!("{}: entry {}: {e}", self.path.display(), entry.name))?;
        npy(&raw).map_err(|e| format!("{}: array {name}: {e}", self.path.display()))
    }
}

/// `len` bytes of `file` at `at`; past its end is "truncated".
fn read_at(file: &std::fs::File, at: u64, len: usize) -> Result<Vec<u8>, String> {
    let mut buf = vec![0u8; len];
    read_exact_at(file, &mut buf, at).map_err(|e| if e.kind() == std::io::ErrorKind::UnexpectedEof { "truncated".to_string() } else { e.to_string() })?;
    Ok(buf)
}

#[cfg(unix)]
fn read_exact_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
}

#[cfg(not(unix))]
fn read_exact_at(mut file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    file.seek(std::io::SeekFrom::Start(at))?;
    file.read_exact(buf)
}

struct Entry {
    name: String,
    method: u16,
    crc: u32,
    compressed: usize,
    size: usize,
    local: u64,
}

fn u16_at(b: &[u8], at: usize) -> Result<u16, String> {
    b.get(at..at + 2).map(|s| u16::from_le_bytes([s[0], s[1]])).ok_or_else(|| "truncated".to_string())
}

fn u32_at(b: &[u8], at: usize) -> Result<u32, String> {
    b.get(at..at + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]])).ok_or_else(|| "truncated".to_string())
}

/// The central directory's entries (zip's end record is in the last 64 KiB + 22 bytes).
fn directory(file: &std::fs::File, len: u64) -> Result<Vec<Entry>, String> {
    const END: u32 = 0x0605_4b50;
    const CENTRAL: u32 = 0x0201_4b50;
    let tail_at = len.saturating_sub(22 + 65_535);
    let tail = read_at(file, tail_at, (len - tail_at) as usize)?;
    let end = (0..=tail.len().saturating_sub(22)).rev().find(|&i| u32_at(&tail, i) == Ok(END)).ok_or("no end of central directory")?;
    let count = u16_at(&tail, end + 10)? as usize;
    let dir_at = u64::from(u32_at(&tail, end + 16)?);
    if dir_at > tail_at + end as u64 {
        return Err("bad central directory".into());
    }
    let b = read_at(file, dir_at, (tail_at + end as u64 - dir_at) as usize)?;
    let mut at = 0;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        if u32_at(&b, at)? != CENTRAL {
            return Err("bad central directory".into());
        }
        let name_len = u16_at(&b, at + 28)? as usize;
        let extra_len = u16_at(&b, at + 30)? as usize;
        let comment_len = u16_at(&b, at + 32)? as usize;
        let name = b.get(at + 46..at + 46 + name_len).ok_or("truncated")?;
        let (local, compressed) = (u64::from(u32_at(&b, at + 42)?), u32_at(&b, at + 20)?);
        // Checked before anything is allocated for it: the sizes are the file's word.
        if local + u64::from(compressed) > len {
            return Err("truncated".into());
        }
        out.push(Entry {
            name: String::from_utf8_lossy(name).into_owned(),
            method: u16_at(&b, at + 10)?,
            crc: u32_at(&b, at + 16)?,
            compressed: compressed as usize,
            size: u32_at(&b, at + 24)? as usize,
            local,
        });
        at += 46 + name_len + extra_len + comment_len;
    }
    Ok(out)
}

impl Entry {
    /// The entry's bytes, inflated and checked against its CRC-32.
    fn data(&self, file: &std::fs::File) -> Result<Vec<u8>, String> {
        let head = read_at(file, self.local, 30)?;
        if u32_at(&head, 0)? != 0x0403_4b50 {
            return Err("bad local header".into());
        }
        let start = self.local + 30 + u64::from(u16_at(&head, 26)?) + u64::from(u16_at(&head, 28)?);
        let packed = read_at(file, start, self.compressed)?;
        let data = match self.method {
            0 => packed,
            8 => miniz_oxide::inflate::decompress_to_vec_with_limit(&packed, self.size).map_err(|e| format!("cannot inflate: {e:?}"))?,
            m => return Err(format!("compression method {m} is not supported")),
        };
        if data.len() != self.size || crc32(&data) != self.crc {
            return Err("damaged (size or CRC-32 differs)".into());
        }
        Ok(data)
    }
}

fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { 0xEDB8_8320 ^ (c >> 1) } else { c >> 1 };
            }
            *slot = c;
        }
        t
    });
    !data.iter().fold(!0u32, |c, &x| table[((c ^ x as u32) & 0xff) as usize] ^ (c >> 8))
}

/// One `.npy`: magic, version, header length, a Python-dict header, then the data.
fn npy(b: &[u8]) -> Result<Array, String> {
    if b.get(..6) != Some(b"\x93NUMPY") {
        return Err("not a .npy array".into());
    }
    let (header_len, start) = match b.get(6) {
        Some(1) => (u16_at(b, 8)? as usize, 10),
        Some(2 | 3) => (u32_at(b, 8)? as usize, 12),
        _ => return Err("unknown .npy version".into()),
    };
    let header = std::str::from_utf8(b.get(start..start + header_len).ok_or("truncated header")?).map_err(|_| "header is not text")?;
    let body = &b[start + header_len..];
    let descr = field(header, "descr").ok_or("no descr")?;
    if field(header, "fortran_order").is_some_and(|f| f.starts_with("True")) {
        return Err("Fortran order is not supported".into());
    }
    let shape = shape(field(header, "shape").ok_or("no shape")?)?;
    let n: usize = shape.iter().product();
    let descr = descr.trim_start_matches(['\'', '"']);
    let need = |width: usize| if body.len() == n * width { Ok(()) } else { Err(format!("{} bytes of data for shape {shape:?} of width {width}", body.len())) };
    let data = if descr.starts_with("|u1") || descr.starts_with("|i1") {
        need(1)?;
        Data::U8(body.to_vec())
    } else if descr.starts_with("<f4") {
        need(4)?;
        Data::F32(body.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    } else if descr.starts_with("<f8") {
        need(8)?;
        Data::F32(body.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32).collect())
    } else {
        return Err(format!("dtype {descr} is not supported"));
    };
    Ok(Array { shape, data })
}

/// The text after `'key':` in the header dict.
fn field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let at = header.find(&format!("'{key}'"))?;
    Some(header[at + key.len() + 2..].trim_start().strip_prefix(':')?.trim_start())
}

/// `(7530, 512), ...` -> [7530, 512]; `()` -> [] (a scalar).
fn shape(s: &str) -> Result<Vec<usize>, String> {
    let inner = s.strip_prefix('(').and_then(|r| r.split(')').next()).ok_or("bad shape")?;
    inner.split(',').map(str::trim).filter(|x| !x.is_empty()).map(|x| x.parse().map_err(|_| format!("bad shape {inner}"))).collect()
}

#[cfg(test)]
#[path = "npz_tests.rs"]
mod tests;
