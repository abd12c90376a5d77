//! USE-m3's piece table: each piece's 512 six-bit codes, packed four in three bytes, one row a
//! piece in piece order (49 MB; as floats it would be 256 MB). Built from the archive's 17
//! blocks (piece `i` is row `i / 17` of block `i % 17`), one block read at a time; kept in
//! memory, or in a file of the cache directory (`use_m3_table_file.rs`) whose rows are read
//! when a token needs them, so that the table is not resident at all.

use std::fs::File;

pub const BLOCKS: usize = 17;
pub const EMB: usize = 512;
/// A piece's row of `EMB` 6-bit codes, packed.
pub const ROW_BYTES: usize = EMB / 4 * 3;

/// Block `b`'s codes, rows x `EMB` (the archive's `q{b+1}`), read when asked for.
pub type Blocks<'a> = &'a mut dyn FnMut(usize) -> Result<Vec<u8>, String>;

pub struct Table {
    rows: Rows,
    pieces: usize,
}

enum Rows {
    Owned(Vec<u8>),
    /// The table file, its rows from byte `at`.
    File { file: File, at: u64 },
}

impl Table {
    pub fn pieces(&self) -> usize {
        self.pieces
    }

    /// Piece `i`'s packed codes (`i` < `pieces`) into `out` (`ROW_BYTES`); a file that cannot
    /// be read (cut short since it was checked) is an error, not a fault.
    pub fn row(&self, i: usize, out: &mut [u8]) -> Result<(), String> {
        match &self.rows {
            Rows::Owned(v) => out.copy_from_slice(&v[i * ROW_BYTES..(i + 1) * ROW_BYTES]),
            Rows::File { file, at } => read_at(file, out, at + (i * ROW_BYTES) as u64).map_err(|e| format!("cannot read USE-m3's piece table: {e}"))?,
        }
        Ok(())
    }

    /// Whether the rows are read from a file (else they are on the heap).
    #[cfg(test)]
    pub fn in_file(&self) -> bool {
        matches!(self.rows, Rows::File { .. })
    }

    /// Rows from byte `at` of `file`, which holds `pieces` of them after it (checked by the caller).
    pub fn in_file_at(file: File, at: u64, pieces: usize) -> Table {
        Table { rows: Rows::File { file, at }, pieces }
    }

    /// The table on the heap, each block packed and dropped in turn.
    pub fn in_memory(blocks: Blocks) -> Result<Table, String> {
        let mut table = Vec::new();
        let mut rows = 0;
        for b in 0..BLOCKS {
            let codes = checked(b, blocks(b)?, &mut rows)?;
            if b == 0 {
                table = vec![0u8; rows * BLOCKS * ROW_BYTES];
            }
            for (r, row) in codes.chunks_exact(EMB).enumerate() {
                let i = r * BLOCKS + b;
                pack_row(row, &mut table[i * ROW_BYTES..(i + 1) * ROW_BYTES]);
            }
        }
        Ok(Table { rows: Rows::Owned(table), pieces: rows * BLOCKS })
    }
}

/// Block `b`'s codes, checked: whole rows, as many as block 0's (set in `rows`), 6 bits each.
pub fn checked(b: usize, codes: Vec<u8>, rows: &mut usize) -> Result<Vec<u8>, String> {
    let name = format!("q{}", b + 1);
    if b == 0 {
        *rows = codes.len() / EMB;
    }
    if codes.len() != *rows * EMB || codes.is_empty() {
        return Err(format!("array {name} is not a {} x {EMB} table of codes", *rows));
    }
    if codes.iter().any(|&c| c >= 64) {
        return Err(format!("array {name} has a code past 6 bits"));
    }
    Ok(codes)
}

/// Four 6-bit codes a three bytes, `row.len()` a multiple of 4.
pub fn pack_row(row: &[u8], out: &mut [u8]) {
    for (c, o) in row.chunks_exact(4).zip(out.chunks_exact_mut(3)) {
        o[0] = c[0] | (c[1] << 6);
        o[1] = (c[1] >> 2) | (c[2] << 4);
        o[2] = (c[2] >> 4) | (c[3] << 2);
    }
}

/// The four codes of three packed bytes.
pub fn unpack4(b: &[u8]) -> [u8; 4] {
    [b[0] & 63, (b[0] >> 6) | ((b[1] & 15) << 2), (b[1] >> 4) | ((b[2] & 3) << 4), b[2] >> 2]
}

#[cfg(unix)]
pub fn read_at(f: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(f, buf, at)
}

#[cfg(windows)]
pub fn read_at(f: &File, mut buf: &mut [u8], mut at: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(f, buf, at)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => (buf, at) = (&mut buf[n..], at + n as u64),
        }
    }
    Ok(())
}

#[cfg(test)]
#[test]
fn six_bit_codes_pack_and_unpack() {
    let row: Vec<u8> = (0..EMB).map(|i| ((i * 37 + 11) % 64) as u8).collect();
    let mut packed = vec![0u8; ROW_BYTES];
    pack_row(&row, &mut packed);
    let back: Vec<u8> = packed.chunks_exact(3).flat_map(unpack4).collect();
    assert_eq!(back, row);
}
