use super::*;

const ROWS: usize = 3;

/// Block `b`'s codes, different in every row and block.
fn codes(b: usize) -> Vec<u8> {
    (0..ROWS * EMB).map(|i| ((i * 7 + b * 13) % 64) as u8).collect()
}

fn rows_of(t: &Table) -> Vec<Vec<u8>> {
    (0..t.pieces())
        .map(|i| {
            let mut row = vec![0u8; ROW_BYTES];
            t.row(i, &mut row).unwrap();
            row
        })
        .collect()
}

/// The table from `cached`, and how many blocks it read.
fn cached_counting(file: &Path, weights: &[u8; 32]) -> (Result<Table, String>, usize) {
    let mut read = 0;
    let t = cached(file, weights, &mut |b| {
        read += 1;
        Ok(codes(b))
    });
    (t, read)
}

#[test]
fn the_table_file_is_built_once_then_read_and_a_damaged_one_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cache").join(FILE);
    let weights = [7u8; 32];
    let want = rows_of(&Table::in_memory(&mut |b| Ok(codes(b))).unwrap());
    assert_eq!(want.len(), ROWS * BLOCKS);

    let (t, read) = cached_counting(&file, &weights);
    let t = t.unwrap();
    assert!(t.in_file());
    assert_eq!((rows_of(&t), read), (want.clone(), BLOCKS));
    assert_eq!(std::fs::metadata(&file).unwrap().len() as usize, HEADER + ROWS * BLOCKS * ROW_BYTES);
    drop(t);
    // A second start reads the file and no block of the archive.
    let (t, read) = cached_counting(&file, &weights);
    assert_eq!((rows_of(&t.unwrap()), read), (want.clone(), 0));

    // Each damage is found and the file built again, the same rows in the end.
    let good = std::fs::read(&file).unwrap();
    let mut flipped = good.clone();
    flipped[HEADER + 5 * ROW_BYTES + 17] ^= 0x10;
    let damages: [(&str, Vec<u8>); 4] = [("a flipped row byte", flipped), ("cut short", good[..good.len() - 100].to_vec()), ("only a header", good[..HEADER].to_vec()), ("empty", Vec::new())];
    for (what, bytes) in damages {
        std::fs::write(&file, &bytes).unwrap();
        let (t, read) = cached_counting(&file, &weights);
        let t = t.unwrap();
        assert!(t.in_file(), "{what}");
        assert_eq!((rows_of(&t), read), (want.clone(), BLOCKS), "{what}");
        assert_eq!(std::fs::read(&file).unwrap(), good, "{what}: the file is whole again");
    }
    // Other weights: built again for them.
    let (t, read) = cached_counting(&file, &[8u8; 32]);
    assert_eq!((rows_of(&t.unwrap()), read), (want.clone(), BLOCKS));
    assert_eq!(std::fs::read(&file).unwrap()[24..56], [8u8; 32]);
    // Nothing but the file is left in the directory (no temporary file).
    assert_eq!(std::fs::read_dir(file.parent().unwrap()).unwrap().count(), 1);
}

#[test]
fn bad_weights_are_an_error_and_an_unwritable_cache_keeps_the_table_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(FILE);
    let e = cached(&file, &[1; 32], &mut |b| if b == 3 { Ok(vec![64; ROWS * EMB]) } else { Ok(codes(b)) }).err().unwrap();
    assert!(e.contains("q4") && e.contains("past 6 bits"), "{e}");
    let e = cached(&file, &[1; 32], &mut |b| if b == 2 { Err("damaged".into()) } else { Ok(codes(b)) }).err().unwrap();
    assert_eq!(e, "damaged");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file is left of a failed build");

    // The cache "directory" is a file: the table is built in memory, the same rows.
    let not_dir = dir.path().join("plain");
    std::fs::write(&not_dir, b"x").unwrap();
    let t = cached(&not_dir.join(FILE), &[1; 32], &mut |b| Ok(codes(b))).unwrap();
    assert!(!t.in_file());
    assert_eq!(rows_of(&t), rows_of(&Table::in_memory(&mut |b| Ok(codes(b))).unwrap()));
}
