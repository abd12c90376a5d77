use super::*;

/// A zip of one stored (uncompressed) entry, as NumPy's `savez` writes them.
fn stored_zip(name: &str, data: &[u8]) -> Vec<u8> {
    let crc = crc32(data);
    let mut z = Vec::new();
    let le16 = |z: &mut Vec<u8>, v: u16| z.extend_from_slice(&v.to_le_bytes());
    let le32 = |z: &mut Vec<u8>, v: u32| z.extend_from_slice(&v.to_le_bytes());
    le32(&mut z, 0x0403_4b50);
    for v in [20u16, 0, 0, 0, 0] {
        le16(&mut z, v);
    }
    for v in [crc, data.len() as u32, data.len() as u32] {
        le32(&mut z, v);
    }
    le16(&mut z, name.len() as u16);
    le16(&mut z, 0);
    z.extend_from_slice(name.as_bytes());
    z.extend_from_slice(data);
    let central = z.len() as u32;
    le32(&mut z, 0x0201_4b50);
    for v in [20u16, 20, 0, 0, 0, 0] {
        le16(&mut z, v);
    }
    for v in [crc, data.len() as u32, data.len() as u32] {
        le32(&mut z, v);
    }
    for v in [name.len() as u16, 0, 0, 0, 0] {
        le16(&mut z, v);
    }
    le32(&mut z, 0);
    le32(&mut z, 0);
    z.extend_from_slice(name.as_bytes());
    let size = z.len() as u32 - central;
    le32(&mut z, 0x0605_4b50);
    for v in [0u16, 0, 1, 1] {
        le16(&mut z, v);
    }
    le32(&mut z, size);
    le32(&mut z, central);
    le16(&mut z, 0);
    z
}

fn npy_f4(shape: &str, values: &[f32]) -> Vec<u8> {
    let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}\n");
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(header.len() as u16).to_le_bytes());
    b.extend_from_slice(header.as_bytes());
    values.iter().for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
    b
}

#[test]
fn an_archive_reads_and_a_damaged_one_is_refused() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926, "the CRC-32 check value");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.npz");
    let zip = stored_zip("m.npy", &npy_f4("(2, 3)", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    std::fs::write(&path, &zip).unwrap();
    let read = |path: &Path| Archive::open(path).and_then(|a| a.array("m"));
    let got = read(&path).unwrap();
    assert_eq!(got.shape, vec![2, 3]);
    assert!(matches!(&got.data, Data::F32(v) if v == &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    assert!(Archive::open(&path).unwrap().array("none").unwrap_err().contains("no array none"));

    let mut bad = zip.clone();
    bad[120] ^= 1; // inside the data
    std::fs::write(&path, &bad).unwrap();
    assert!(read(&path).unwrap_err().contains("damaged"));

    let short = stored_zip("m.npy", &npy_f4("(2, 4)", &[1.0; 6]));
    std::fs::write(&path, &short).unwrap();
    let e = read(&path).unwrap_err();
    assert!(e.contains("array m") && e.contains("bytes of data"), "{e}");
    std::fs::write(&path, &zip[..zip.len() - 30]).unwrap();
    assert!(read(&path).unwrap_err().contains("not a .npz archive"));
    // An entry that claims more bytes than the file has is refused before it is read.
    let mut long = zip.clone();
    let central = long.len() - 22 - 46 - 5;
    long[central + 20..central + 24].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&path, &long).unwrap();
    assert!(read(&path).unwrap_err().contains("truncated"));
}
