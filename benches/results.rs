//! The cost of fitting a tool result to the budget (issue 42): counting and cutting an answer of
//! 10 KB to 2 MB at the default 25,000 tokens (`results::fit`: token ends of the whole, the cut,
//! the note, keeping it on the shelf), and reading one page of a kept 2 MB result. Before the
//! runs, prints how many tokens each answer keeps out of the context.
//!
//! `cargo bench --bench results`.

use divan::Bencher;
use serde_json::{json, Value};
use toolreg::output::ModelOutput;
use toolreg::results::{fit, read, Budget, Shelf};
use toolreg::tokenize::for_model;

fn main() {
    for bytes in SIZES {
        let (output, raw) = answer(bytes);
        let shelf = Shelf::default();
        match fit(&shelf, "host", "t", &output, Some(&raw), false, Budget::default(), for_model(None)) {
            Some((_, cut)) => println!(
                "{bytes} bytes: {} tokens, {} shown, {} kept out of the context",
                cut.total_tokens,
                cut.shown_tokens,
                cut.total_tokens - cut.shown_tokens
            ),
            None => println!("{bytes} bytes: within the budget, passed whole"),
        }
    }
    divan::main();
}

const SIZES: [usize; 4] = [10_000, 100_000, 1_000_000, 2_000_000];

/// A file read of `bytes`: numbered lines in two scripts, as tests/result_budget.rs reads.
fn answer(bytes: usize) -> (ModelOutput, Value) {
    let mut text = String::new();
    let mut i = 0u64;
    while text.len() < bytes {
        text.push_str(&format!("{i:07} 文件的第{i}行 — the {}th line of a long file, read by page\n", i * 31 % 977));
        i += 1;
    }
    let raw = json!({"content": [{"type": "text", "text": text}]});
    (ModelOutput::Text(text), raw)
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn fit_to_25k_tokens(bencher: Bencher, bytes: usize) {
    let (output, raw) = answer(bytes);
    let enc = for_model(None);
    enc.name.count("warm the encoding");
    bencher.bench_local(|| {
        let shelf = Shelf::default();
        fit(&shelf, "host", "t", &output, Some(&raw), false, Budget::default(), enc)
    });
}

#[divan::bench(sample_count = 20)]
fn read_a_page_of_a_kept_2mb_result(bencher: Bencher) {
    let (output, raw) = answer(2_000_000);
    let shelf = Shelf::default();
    let (_, cut) = fit(&shelf, "host", "t", &output, Some(&raw), false, Budget::default(), for_model(None)).expect("cut");
    let args = json!({"ref": cut.reference, "offset": cut.shown_tokens});
    bencher.bench_local(|| read::page(&shelf, &["host"], &args, Budget::default()));
}
