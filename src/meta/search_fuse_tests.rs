use super::*;

#[test]
fn each_model_counts_by_the_letters_it_reads() {
    // MiniLM (latin 1, cjk 0) and USE-m3 fused (latin 0, cjk 1).
    let (minilm, usem3) = (|q: &str| weight_for(q, 4.0, 0.0, 1.0), |q: &str| weight_for(q, 4.0, 1.0, 0.0));
    assert_eq!((minilm("create a branch"), usem3("create a branch")), (4.0, 0.0));
    assert_eq!((minilm("创建分支"), usem3("创建分支")), (0.0, 4.0));
    // 在 GitHub 上创建分支: 6 letters of 12 are Han.
    assert_eq!((minilm("在GitHub上创建分支"), usem3("在GitHub上创建分支")), (2.0, 2.0));
    assert_eq!(weight_for("?!", 4.0, 1.0, 0.5), 2.0);
    // Any script but Latin goes to the multilingual model: Hangul, kana, Cyrillic.
    for q in ["브랜치 만들기", "ブランチを作成", "создать ветку"] {
        assert_eq!((minilm(q), usem3(q)), (0.0, 4.0), "{q}");
    }
    assert_eq!((minilm("crée une branche"), usem3("crée une branche")), (4.0, 0.0));
}

#[test]
fn a_doc_lacking_a_vector_that_counts_has_no_fused_cosine() {
    let a = [0.5, f32::NAN, 0.25];
    let b = [0.1, 0.2, f32::NAN];
    let fused = fuse(&[Part { cosines: &a, weight: 2.0 }, Part { cosines: &b, weight: 0.0 }], 3);
    assert_eq!(fused[0], 1.0);
    assert!(fused[1].is_nan());
    assert_eq!(fused[2], 0.5, "b's missing vector does not count at weight 0");
    let fused = fuse(&[Part { cosines: &a, weight: 1.0 }, Part { cosines: &b, weight: 1.0 }], 3);
    assert!((fused[0] - 0.6).abs() < 1e-6 && fused[1].is_nan() && fused[2].is_nan());
}
