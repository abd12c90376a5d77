//! Quality evaluation of the ranked `tool_search` engine on real MCP catalogs.
//!
//! Dev set (`tool-search-dev.json`, 80 short queries over `mcp-catalogs/`): a query counts at k if
//! any gold (server, tool) is in the top k; MRR is the mean of 1/rank of the first gold within the
//! top 10 (0 if none). LiveMCPBench (95 long multi-step tasks over its 527-tool catalog): "frac@k"
//! is the fraction of a task's gold tools found in the top k, averaged over tasks; "any@k" is the
//! share of tasks with at least one gold tool in the top k. Floors sit just below measured figures.

#[path = "support/search_eval.rs"]
mod search_eval;

use search_eval::*;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use toolreg::meta::search::{gloss_english_words, split_words, Blend, SearchDoc, SearchIndex, SearchParams};
use toolreg::meta::search_text::is_stop_word;

#[test]
fn dev_set_quality() {
    let root = fixtures();
    let docs = load_catalog(&root.join("mcp-catalogs"));
    assert_eq!(docs.len(), 2422, "fixture catalog size");
    let index = SearchIndex::build(&docs);
    let dev = read_json(&root.join("tool-search-dev.json"));
    let mut by_kind: BTreeMap<String, Agg> = BTreeMap::new();
    let mut all = Agg::default();
    let verbose = std::env::var_os("SEARCH_EVAL_VERBOSE").is_some();
    for item in dev["items"].as_array().expect("items") {
        let query = item["query"].as_str().unwrap();
        let kind = item["kind"].as_str().unwrap().to_string();
        let gold = gold_set(item);
        let hits = index.search(query, None, 10);
        let rank = hits
            .iter()
            .position(|h| gold.contains(&key(&docs[h.doc])))
            .map(|p| p + 1);
        let at = |k: usize| {
            if rank.is_some_and(|r| r <= k) {
                1.0
            } else {
                0.0
            }
        };
        let rr = rank.map_or(0.0, |r| 1.0 / r as f64);
        by_kind
            .entry(kind.clone())
            .or_default()
            .add(at(1), at(5), at(10), rr);
        all.add(at(1), at(5), at(10), rr);
        if verbose && rank != Some(1) {
            let top: Vec<String> = hits
                .iter()
                .take(3)
                .map(|h| docs[h.doc].name.clone())
                .collect();
            eprintln!("  [{kind}] {query:?} rank={rank:?} top={top:?} gold={gold:?}");
        }
    }
    eprintln!("== tool-search-dev (80 queries, MRR over top 10) ==");
    for (k, a) in &by_kind {
        print_row(k, a);
    }
    print_row("overall", &all);

    // Floors (R@1, R@5, R@10, MRR): measured minus ~0.025; exact names are guaranteed first.
    // Measured: exact 1/1/1/1, intent .773/.955/.955/.833, keyword and namespace 1/1/1/1,
    // overall .875/.975/.975/.908.
    let floors: &[(&str, [f64; 4])] = &[
        ("exact", [1.0, 1.0, 1.0, 1.0]),
        ("intent", [0.75, 0.93, 0.93, 0.81]),
        ("keyword", [0.97, 0.97, 0.97, 0.97]),
        ("namespace", [0.97, 0.97, 0.97, 0.97]),
        ("overall", [0.85, 0.95, 0.95, 0.885]),
    ];
    for (k, f) in floors {
        let a = if *k == "overall" { all } else { by_kind[*k] };
        let got = a.mean();
        for (i, m) in ["R@1", "R@5", "R@10", "MRR"].iter().enumerate() {
            check_floor(&format!("dev {k} {m}"), got[i], f[i]);
        }
    }
}

/// Floors (R@1, R@5, R@10, MRR) of the shipped lexical search on `dev-queries.json`: measured
/// minus about one query's worth (0.03-0.06). Measured 2026-12-02: tune en .619/.778/.841/.686,
/// holdout en .717/.830/.868/.773, tune zh .778/.963/1/.852 (catalog-side gloss), holdout zh
/// .842/.947/.947/.886, all intent .619/.786/.841/.694 before the catalog-side gloss.
const FLOORS_LEXICAL: [(&str, [f64; 4]); 5] = [
    ("tune en all", [0.59, 0.75, 0.81, 0.66]),
    ("holdout en all", [0.68, 0.80, 0.83, 0.74]),
    ("tune zh all", [0.74, 0.92, 0.96, 0.81]),
    ("holdout zh all", [0.78, 0.89, 0.89, 0.84]),
    ("both all intent", [0.59, 0.75, 0.81, 0.66]),
];

/// The project's development set (`tests/search/dev-queries.json`: the 80 fixture queries plus
/// English intent and Chinese queries), by split, language and kind, with and without the
/// Chinese gloss. Floors sit below measured figures (docs/benchmarks-history.md "tool_search:
/// Chinese queries, more development data, fusion while embedding (issue 26)"); the
/// holdout's say whether what was tuned on the other half generalised. `SEARCH_EVAL_CATALOG`
/// and `SEARCH_EVAL_DEV` evaluate transformed copies (the segmenter comparison) without floors.
#[test]
fn dev_queries_quality() {
    let catalog = std::env::var_os("SEARCH_EVAL_CATALOG").map(std::path::PathBuf::from);
    let docs = load_catalog(&catalog.clone().unwrap_or_else(|| fixtures().join("mcp-catalogs")));
    let qs = dev_queries(&docs);
    let run = |params: SearchParams, label: &str| {
        let index = SearchIndex::build_with(&docs, params);
        dev_report(label, &qs, &gold_ranks(&index, &docs, &qs, label, |q| q.split == "tune"))
    };
    let plain = run(SearchParams { gloss: false, ..SearchParams::default() }, "lexical, CJK bigrams without the gloss");
    let rows = run(SearchParams::default(), "lexical as shipped (CJK bigrams + gloss)");
    let dead = !SearchParams::default().cjk_dead_grams;
    run(SearchParams { cjk_dead_grams: dead, ..SearchParams::default() }, &format!("lexical, cjk_dead_grams = {dead} (not shipped)"));
    if catalog.is_some() || std::env::var_os("SEARCH_EVAL_DEV").is_some() {
        return;
    }
    for (row, f) in FLOORS_LEXICAL {
        let got = rows[row].mean();
        for (i, m) in ["R@1", "R@5", "R@10", "MRR"].iter().enumerate() {
            check_floor(&format!("dev-queries {row} {m}"), got[i], f[i]);
        }
    }
    // The gloss is for Chinese only: English is untouched, Chinese better on both halves.
    for split in ["tune", "holdout"] {
        let en = format!("{split} en all");
        assert_eq!(rows[&en].mean(), plain[&en].mean(), "{en}");
        let zh = format!("{split} zh all");
        assert!(rows[&zh].mean()[1] > plain[&zh].mean()[1], "{zh} R@5: the gloss does not help");
    }
}

/// Floors (R@1, R@5, R@10, MRR) of the shipped lexical search on `unseen-zh-queries.json`, Chinese
/// intent queries written after the gloss and never tuned on: measured minus about one query's
/// worth (1/68 = 0.015). Measured 2026-12-02: .426/.603/.647/.496 with the table alone (the first
/// gloss, written for the dev queries: .309/.485/.559/.383); with the dictionary behind it (its
/// weight chosen on this set's `tune` half, docs/benchmarks-history.md) .441/.676/.721/.527.
const FLOORS_UNSEEN_ZH: [f64; 4] = [0.42, 0.66, 0.70, 0.51];

/// Chinese queries nobody tuned on (docs/benchmarks-history.md "tool_search: Chinese queries,
/// more development data, fusion while embedding (issue 26)"): the gloss must carry to
/// requests it was not written for, and help there too.
#[test]
fn unseen_chinese_queries_quality() {
    let docs = load_catalog(&fixtures().join("mcp-catalogs"));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/search/unseen-zh-queries.json");
    let qs = queries_from(&path, &docs);
    assert!(qs.len() >= 40 && qs.iter().all(|q| q.lang == "zh"), "{} queries", qs.len());
    let run = |params: SearchParams, label: &str| {
        let index = SearchIndex::build_with(&docs, params);
        dev_report(label, &qs, &gold_ranks(&index, &docs, &qs, label, |_| true))["both zh all"].mean()
    };
    let plain = run(SearchParams { gloss: false, ..SearchParams::default() }, "unseen zh, bigrams without the gloss");
    let table = run(SearchParams { dictionary_weight: 0.0, ..SearchParams::default() }, "unseen zh, the gloss's table without the dictionary");
    let got = run(SearchParams::default(), "unseen zh, lexical as shipped");
    for (i, m) in ["R@1", "R@5", "R@10", "MRR"].iter().enumerate() {
        check_floor(&format!("unseen zh {m}"), got[i], FLOORS_UNSEEN_ZH[i]);
    }
    assert!(table[1] > plain[1] + 0.25, "the gloss does not carry to unseen queries: R@5 {:.3} vs {:.3}", table[1], plain[1]);
    assert!(got[1] > table[1] && got[3] > table[3], "the dictionary does not help: {got:?} vs {table:?}");
}

/// The gloss is written in the catalogs' words: every English word it adds (stop words aside,
/// which the analyzer drops) finds a fixture tool. A word no tool uses could only dilute a query.
#[test]
fn the_gloss_speaks_the_catalogs_words() {
    let docs = load_catalog(&fixtures().join("mcp-catalogs"));
    let index = SearchIndex::build(&docs);
    let words = gloss_english_words();
    assert!(words.len() > 300, "{} words", words.len());
    let unused: Vec<&str> = words.into_iter().filter(|w| !is_stop_word(w) && index.search(w, None, 1).is_empty()).collect();
    assert!(unused.is_empty(), "gloss words no fixture tool uses: {unused:?}");
}

#[test]
fn livemcpbench_quality() {
    let root = fixtures().join("livemcpbench");
    let docs = load_catalog(&root.join("servers"));
    let index = SearchIndex::build(&docs);
    let q = read_json(&root.join("queries.json"));
    let (mut frac, mut any) = (Agg::default(), Agg::default());
    for item in q["items"].as_array().expect("items") {
        let gold = gold_set(item);
        if gold.is_empty() {
            continue;
        }
        let hits = index.search(item["query"].as_str().unwrap(), None, 10);
        let found = |k: usize| {
            hits.iter()
                .take(k)
                .filter(|h| gold.contains(&key(&docs[h.doc])))
                .count()
        };
        let f = |k: usize| found(k) as f64 / gold.len() as f64;
        let a = |k: usize| if found(k) > 0 { 1.0 } else { 0.0 };
        let rank = hits
            .iter()
            .position(|h| gold.contains(&key(&docs[h.doc])))
            .map(|p| p + 1);
        let rr = rank.map_or(0.0, |r| 1.0 / r as f64);
        frac.add(f(1), f(5), f(10), rr);
        any.add(a(1), a(5), a(10), rr);
        if std::env::var_os("SEARCH_EVAL_VERBOSE").is_some() && f(5) < 1.0 {
            let top: Vec<String> = hits
                .iter()
                .take(5)
                .map(|h| {
                    let (s, t) = key(&docs[h.doc]);
                    let g = if gold.contains(&(s.clone(), t.clone())) {
                        "*"
                    } else {
                        ""
                    };
                    format!("{g}{s}/{t}")
                })
                .collect();
            let mut g: Vec<String> = gold.iter().map(|(s, t)| format!("{s}/{t}")).collect();
            g.sort();
            eprintln!(
                "  frac5={:.2} {:?}\n    top={top:?}\n    gold={g:?}",
                f(5),
                item["query"].as_str().unwrap()
            );
        }
    }
    eprintln!(
        "== LiveMCPBench ({} tasks, {} tools; MRR of first gold over top 10) ==",
        frac.n,
        docs.len()
    );
    print_row("frac of gold in top k", &frac);
    print_row("any gold in top k", &any);

    let got_frac = frac.mean();
    let got_any = any.mean();
    // Measured: frac .172/.411/.478, any .394/.670/.723, MRR .502.
    let floor_frac = [0.15, 0.39, 0.455, 0.48];
    let floor_any = [0.37, 0.65, 0.70, 0.48];
    for (i, m) in ["R@1", "R@5", "R@10", "MRR"].iter().enumerate() {
        check_floor(
            &format!("livemcpbench frac {m}"),
            got_frac[i],
            floor_frac[i],
        );
        check_floor(&format!("livemcpbench any {m}"), got_any[i], floor_any[i]);
    }
}

fn doc(server: &str, raw: &str, desc: &str) -> SearchDoc {
    SearchDoc {
        name: format!("mcp__{server}__{raw}"),
        namespace: format!("mcp:{server}"),
        namespace_label: format!("mcp:{}", server.to_uppercase()),
        raw_name: Some(raw.to_string()),
        server: Some(server.to_string()),
        description: desc.to_string(),
        input_schema: serde_json::json!({"type": "object", "properties": {"branch": {"type": "string", "description": "Name of the branch"}}}),
    }
}

fn small_catalog() -> Vec<SearchDoc> {
    vec![
        doc(
            "github",
            "list_branches",
            "List branches. Create branch create branch create branch.",
        ),
        doc(
            "gitlab",
            "create_branch",
            "Create a new branch in a GitLab project",
        ),
        doc(
            "github",
            "create_branch",
            "Create a new branch in a GitHub repository",
        ),
        doc("git", "git_clone", "Clone a repository"),
        SearchDoc {
            name: "web_search".into(),
            namespace: "web".into(),
            namespace_label: "Web".into(),
            raw_name: None,
            server: None,
            description: "Search the web".into(),
            input_schema: Value::Null,
        },
    ]
}

#[test]
fn exact_names_rank_first() {
    let docs = small_catalog();
    let index = SearchIndex::build(&docs);
    assert_eq!(index.len(), 5);
    // Unqualified raw name: both create_branch tools first, ahead of the keyword-stuffed doc.
    let hits = index.search("create_branch", None, 10);
    let top: HashSet<usize> = hits.iter().take(2).map(|h| h.doc).collect();
    assert_eq!(top, HashSet::from([1, 2]));
    // Qualified forms pick the server.
    for q in [
        "github create_branch",
        "github/create_branch",
        "github__create_branch",
        "GitHub create_branch",
    ] {
        assert_eq!(index.search(q, None, 10)[0].doc, 2, "{q}");
    }
    assert_eq!(index.search("gitlab create_branch", None, 10)[0].doc, 1);
    // Wire names.
    assert_eq!(
        index.search("mcp__github__create_branch", None, 10)[0].doc,
        2
    );
    assert_eq!(index.search("web_search", None, 10)[0].doc, 4);
    assert_eq!(index.search("git_clone", None, 10)[0].doc, 3);
}

#[test]
fn blending_keeps_exact_names_first_and_ranks_unembedded_docs_lexically() {
    let docs = small_catalog();
    let index = SearchIndex::build(&docs);
    // A cosine that prefers web_search over everything, at a huge weight.
    let cosines = [0.0, 0.0, 0.0, 0.0, 1.0];
    let blend = |w| Some(Blend { cosines: &cosines, weight: w, cjk: 0.0 });
    assert_eq!(index.search_blended("github create_branch", None, 10, blend(1000.0))[0].doc, 2, "a qualified name beats any cosine");
    assert_eq!(index.search_blended("git_clone", None, 10, blend(1000.0))[0].doc, 3);
    // No word in common: meaning alone finds it, and a namespace filter still applies.
    assert!(index.search("quokka zebra", None, 10).is_empty());
    assert_eq!(index.search_blended("quokka zebra", None, 10, blend(1.0))[0].doc, 4);
    assert!(index.search_blended("quokka zebra", Some("github"), 10, blend(1.0)).is_empty());
    // NaN (no vector yet) ranks on words only; weight 0 keeps the lexical order.
    let unknown = [f32::NAN; 5];
    let lexical: Vec<usize> = index.search("branch", None, 10).iter().map(|h| h.doc).collect();
    let blended: Vec<usize> = index.search_blended("branch", None, 10, Some(Blend { cosines: &unknown, weight: 1.0, cjk: 0.0 })).iter().map(|h| h.doc).collect();
    assert_eq!(blended, lexical);
    let zero: Vec<usize> = index.search_blended("branch", None, 10, blend(0.0)).iter().map(|h| h.doc).collect();
    assert_eq!(zero, lexical);
}

#[test]
fn filters_empty_queries_and_determinism() {
    let docs = small_catalog();
    let index = SearchIndex::build(&docs);
    assert!(index.search("", None, 10).is_empty());
    assert!(index.search("   \t", None, 10).is_empty());
    assert!(index.search("branch", None, 0).is_empty());
    let hits = index.search("branch", Some("GITHUB"), 10);
    assert!(!hits.is_empty());
    assert!(hits
        .iter()
        .all(|h| docs[h.doc].server.as_deref() == Some("github")));
    let hits = index.search("branch", Some("mcp:gitlab"), 10);
    assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), vec![1]);
    assert_eq!(index.search("search", Some("web"), 10)[0].doc, 4);
    assert!(index.search("branch", Some("nope"), 10).is_empty());
    let limited = index.search("branch", None, 1);
    assert_eq!(limited.len(), 1);
    let a = index.search("create a branch", None, 10);
    let b = index.search("create a branch", None, 10);
    assert_eq!(a, b);
    assert!(a
        .windows(2)
        .all(|w| w[0].score > w[1].score || (w[0].score == w[1].score && w[0].doc < w[1].doc)));
    // Synonyms and camelCase: "remove" reaches delete, "mergeRequest" splits.
    let docs2 = vec![
        doc("x", "deleteMergeRequest", "Deletes a merge request"),
        doc("x", "list_things", "Lists things"),
    ];
    let idx2 = SearchIndex::build(&docs2);
    assert_eq!(idx2.search("remove merge request", None, 10)[0].doc, 0);
}

#[test]
fn identifier_splitting() {
    let split = |s: &str| {
        let mut v = Vec::new();
        split_words(s, |w| v.push(w.to_string()));
        v.join(" ")
    };
    assert_eq!(split("getMergeRequestDiffs"), "get merge request diffs");
    assert_eq!(
        split("TwilioApiV2010--UpdateMember"),
        "twilio api v 2010 update member"
    );
    assert_eq!(
        split("mcp__github__create_branch"),
        "mcp github create branch"
    );
    assert_eq!(
        split("HTTPServer.list-items/v2"),
        "http server list items v 2"
    );
    assert_eq!(
        split("API-retrieve-page-markdown"),
        "api retrieve page markdown"
    );
}

#[test]
fn odd_inputs_do_not_panic() {
    let docs = small_catalog();
    let index = SearchIndex::build(&docs);
    let long = "create a branch please ".repeat(2_000);
    for q in [
        long.as_str(),
        "café ñandú 日本語 ÉCOLE",
        "🙂🙂 branch",
        "a the of",
        "----",
        "x",
        "gitlab/",
        "/create_branch",
        "__",
    ] {
        let hits = index.search(q, None, 5);
        assert!(hits.len() <= 5, "{q}");
    }
    assert!(SearchIndex::build(&[])
        .search("anything", None, 10)
        .is_empty());
}

#[test]
fn index_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<SearchIndex>();
    assert_send_sync::<SearchDoc>();
}
