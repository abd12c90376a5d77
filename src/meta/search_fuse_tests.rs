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

/// A model that answers every text with the same vector and records what it was asked.
struct Recorder(std::sync::Mutex<Vec<String>>);

impl crate::embed::Embedder for Recorder {
    fn embed(&self, texts: Vec<String>, purpose: crate::embed::Purpose) -> futures::future::BoxFuture<'static, Result<crate::embed::Embedded, String>> {
        if purpose == crate::embed::Purpose::Query {
            self.0.lock().unwrap().extend(texts.iter().cloned());
        }
        let vectors = texts.iter().map(|_| vec![1.0, 0.0]).collect();
        Box::pin(async move { Ok(crate::embed::Embedded { vectors, model: "recorder".into() }) })
    }
    fn batch(&self) -> usize {
        8
    }
    fn kind(&self) -> &'static str {
        "host"
    }
}

#[tokio::test]
async fn an_english_model_reads_a_chinese_request_through_its_gloss() {
    use crate::embed::{Options, Semantic, DEFAULT_GLOSS_LOCAL};
    let english = std::sync::Arc::new(Recorder(Default::default()));
    let s = Semantic::start(english.clone(), Options::default());
    assert_eq!(s.gloss(), DEFAULT_GLOSS_LOCAL);
    // English: as written, one model's plain blend.
    assert!(!is_fused(&s, "create a branch") && glossed_for("create a branch", &s).is_none());
    assert_eq!(model_weight("create a branch", &s), 4.0);
    // Chinese: the gloss, its CJK letters at the gloss's share (4 of 4 letters are Han).
    let g = glossed_for("创建分支", &s).expect("the gloss reads 创建分支");
    assert!(g.contains("create") && g.contains("branch"), "{g}");
    assert!(is_fused(&s, "创建分支"));
    assert_eq!(model_weight("创建分支", &s), 4.0 * DEFAULT_GLOSS_LOCAL);
    // Latin words stay in place; both shares count.
    let mixed = glossed_for("在GitHub上创建分支", &s).unwrap();
    assert!(mixed.contains("GitHub") && mixed.contains("branch"), "{mixed}");
    let v = query_vectors(&s, "在GitHub上创建分支").await;
    assert!(v[0].is_ok());
    assert_eq!(english.0.lock().unwrap().last(), Some(&mixed), "the model was asked the gloss");
    // A model told it reads CJK is asked the request as written.
    let multi = std::sync::Arc::new(Recorder(Default::default()));
    let m = Semantic::start(multi.clone(), Options { cjk: 1.0, ..Options::default() });
    assert!(!is_fused(&m, "创建分支"));
    let _ = query_vectors(&m, "创建分支").await;
    assert_eq!(multi.0.lock().unwrap().as_slice(), ["创建分支".to_string()]);
}
