//! `signature`'s output for the schema shapes servers send, and its bounds on hostile ones.

use super::*;
use serde_json::json;

fn sig(schema: Value) -> String {
    signature("t", "", &schema)
}

#[test]
fn example_from_the_brief() {
    let schema = json!({"type": "object", "properties": {
        "query": {"type": "string", "description": "Search query"},
        "perPage": {"type": "number", "description": "Max results", "default": 30},
        "state": {"type": "string", "enum": ["open", "closed"]},
        "labels": {"type": "array", "items": {"type": "string"}},
        "filter": {"type": "object", "properties": {
            "since": {"type": "string"}, "assignee": {"type": ["string", "null"]}}}
    }, "required": ["query"]});
    let expected = r#"/** Search issues in a repository. */
declare function mcp__github__searchIssues(params: {
  /** Search query */
  query: string;
  /** Max results (default 30) */
  perPage?: number;
  state?: "open" | "closed";
  labels?: string[];
  filter?: { since?: string; assignee?: string | null };
}): unknown;"#;
    assert_eq!(signature("mcp__github__searchIssues", "Search issues in a repository.", &schema), expected);
}

#[test]
fn no_arguments() {
    assert_eq!(sig(json!({"type": "object", "properties": {}})), "declare function t(): unknown;");
    assert_eq!(sig(json!({})), "declare function t(): unknown;");
    assert_eq!(sig(json!(true)), "declare function t(): unknown;");
    assert_eq!(sig(json!({"type": "object"})), "declare function t(): unknown;");
}

#[test]
fn nested_objects_with_comments_are_indented() {
    let schema = json!({"properties": {"a": {"type": "object", "required": ["b"], "properties": {
        "b": {"description": "Deep", "type": "object", "properties": {"c": {"type": "integer", "description": "C"}}}}}}});
    let expected = "declare function t(params: {
  a?: {
    /** Deep */
    b: {
      /** C */
      c?: number;
    };
  };
}): unknown;";
    assert_eq!(sig(schema), expected);
}

#[test]
fn arrays_tuples_and_unions_in_arrays() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "array", "items": {"type": ["string", "number"]}},
        "b": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false},
        "c": {"type": "array"},
        "d": {"type": "array", "items": {"type": "array", "items": {"type": "boolean"}}},
        "e": {"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "number"}},
        "f": {"type": "array", "prefixItems": [{"type": "string"}]},
        "g": {"type": "array", "items": [{"type": "string"}, {"type": "boolean"}]}
    }});
    let expected = "declare function t(params: {
  a?: (string | number)[];
  b?: [string, number];
  c?: unknown[];
  d?: boolean[][];
  e?: [string, ...number[]];
  f?: [string];
  g?: [string, boolean];
}): unknown;";
    assert_eq!(sig(schema), expected);
}

#[test]
fn enums_consts_unions_intersections_nullable() {
    let schema = json!({"type": "object", "properties": {
        "e": {"enum": ["a", 1, null]},
        "k": {"const": "fixed"},
        "u": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "o": {"oneOf": [{"type": "integer"}, {"type": "object", "properties": {"x": {"type": "string"}}}]},
        "i": {"allOf": [{"type": "object", "properties": {"x": {"type": "string"}}},
                        {"type": "object", "properties": {"y": {"type": "number"}}}]},
        "n": {"type": "string", "nullable": true},
        "ne": {"type": "string", "enum": ["p", "q"], "nullable": true},
        "ia": {"allOf": [{"anyOf": [{"type": "string"}, {"type": "number"}]}, {"const": 1}]}
    }});
    let expected = r#"declare function t(params: {
  e?: "a" | 1 | null;
  k?: "fixed";
  u?: string | null;
  o?: number | { x?: string };
  i?: { x?: string } & { y?: number };
  n?: string | null;
  ne?: "p" | "q" | null;
  ia?: (string | number) & 1;
}): unknown;"#;
    assert_eq!(sig(schema), expected);
}

#[test]
fn constraint_only_combinators_do_not_add_noise() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}]});
    assert_eq!(sig(schema), "declare function t(params: { a?: string; b?: string }): unknown;");
}

#[test]
fn refs_are_inlined_and_recursion_is_named() {
    let schema = json!({"type": "object", "properties": {
        "p": {"$ref": "#/$defs/Point"},
        "tree": {"$ref": "#/definitions/Node"}
    }, "required": ["p"],
    "$defs": {"Point": {"description": "A point", "type": "object", "required": ["x", "y"],
                        "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
    "definitions": {"Node": {"type": "object", "properties": {
        "value": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#/definitions/Node"}}}}}});
    let expected = "declare function t(params: {
  /** A point */
  p: { x: number; y: number };
  tree?: { value?: string; children?: Node[] };
}): unknown;";
    assert_eq!(sig(schema), expected);
}

#[test]
fn root_ref_and_unresolvable_ref() {
    let schema = json!({"$ref": "#/$defs/Args", "$defs": {"Args": {"type": "object", "properties": {"q": {"type": "string"}}}}});
    assert_eq!(sig(schema), "declare function t(params: {\n  q?: string;\n}): unknown;");
    let schema = json!({"type": "object", "properties": {"x": {"$ref": "https://example.com/x.json"}}});
    assert_eq!(sig(schema), "declare function t(params: {\n  x?: unknown;\n}): unknown;");
}

#[test]
fn index_signatures() {
    let schema = json!({"type": "object", "properties": {
        "env": {"type": "object", "additionalProperties": {"type": "string"}},
        "meta": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "number"}},
        "closed": {"type": "object", "additionalProperties": false},
        "any": {"type": "object"}
    }});
    let expected = "declare function t(params: {
  env?: { [key: string]: string };
  meta?: { a?: string; [key: string]: number };
  closed?: {};
  any?: { [key: string]: unknown };
}): unknown;";
    assert_eq!(sig(schema), expected);
}

#[test]
fn quoted_names_format_default_multiline_and_escaped_comments() {
    let schema = json!({"type": "object", "properties": {
        "foo-bar": {"type": "string", "format": "date-time"},
        "2x": {"type": "boolean", "default": false},
        "ok_$1": {"type": "string", "description": "Line one\nLine two\n\nEnd */ here"}
    }});
    let expected = r#"declare function t(params: {
  /** (format: date-time) */
  "foo-bar"?: string;
  /** (default false) */
  "2x"?: boolean;
  /**
   * Line one
   * Line two
   *
   * End *\/ here
   */
  ok_$1?: string;
}): unknown;"#;
    assert_eq!(sig(schema), expected);
}

#[test]
fn schemas_without_type() {
    let schema = json!({"properties": {"a": {}, "b": {"properties": {"c": {"type": "string"}}}, "d": {"items": {"type": "string"}}}});
    assert_eq!(sig(schema), "declare function t(params: {\n  a?: unknown;\n  b?: { c?: string };\n  d?: string[];\n}): unknown;");
}

#[test]
fn depth_limit_renders_object() {
    let mut schema = json!({"type": "object", "properties": {"leaf": {"type": "string"}}});
    for _ in 0..10 {
        schema = json!({"type": "object", "properties": {"n": schema}});
    }
    let out = sig(schema);
    assert!(out.contains("n?: object"), "{out}");
    assert!(!out.contains("leaf"));
    assert_eq!(out, "declare function t(params: {\n  n?: { n?: { n?: { n?: { n?: { n?: object } } } } };\n}): unknown;");
}

#[test]
fn long_inline_objects_break_into_lines() {
    let props: Map<String, Value> = (0..8).map(|i| (format!("field{i}"), json!({"type": "string"}))).collect();
    let schema = json!({"type": "object", "properties": {"o": {"type": "object", "properties": props}}});
    let out = sig(schema);
    assert!(out.starts_with("declare function t(params: {\n  o?: {\n    field0?: string;\n"), "{out}");
    assert!(out.ends_with("    field7?: string;\n  };\n}): unknown;"), "{out}");
}

#[test]
fn self_referencing_root_and_ref_cycles_terminate() {
    let schema = json!({"type": "object", "properties": {"next": {"$ref": "#"}}});
    assert_eq!(sig(schema), "declare function t(params: {\n  next?: Self;\n}): unknown;");
    let schema = json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}});
    assert_eq!(sig(schema), "declare function t(params: {\n  x?: A;\n}): unknown;");
}

#[test]
fn docstring_indentation_is_removed() {
    let out = signature("t", "Summary.\n\n    Args:\n        q: query\n", &json!({}));
    assert_eq!(out, "/**\n * Summary.\n *\n * Args:\n *     q: query\n */\ndeclare function t(): unknown;");
}

#[test]
fn comments_with_brackets_and_quotes_do_not_confuse_parenthesization() {
    let schema = json!({"type": "object", "properties": {"a": {"anyOf": [
        {"type": "object", "properties": {"x": {"type": "string", "description": "it's \"{ | ( é"}}},
        {"type": "null"}]}}});
    let expected = r#"declare function t(params: {
  a?: {
    /** it's "{ | ( é */
    x?: string;
  } | null;
}): unknown;"#;
    assert_eq!(sig(schema), expected);
    assert_eq!(splits("{ a: 1 } | /** x | \"y */ null", " | ").len(), 2);
}

#[test]
fn exponential_ref_fan_out_is_bounded() {
    let mut defs = Map::new();
    for level in 0..6 {
        let props: Map<String, Value> =
            (0..12).map(|i| (format!("p{i}"), json!({"$ref": format!("#/$defs/L{}", level + 1)}))).collect();
        defs.insert(format!("L{level}"), json!({"type": "object", "properties": props}));
    }
    defs.insert("L6".into(), json!({"type": "string"}));
    let schema = json!({"$ref": "#/$defs/L0", "$defs": defs});
    let out = sig(schema);
    assert!(out.len() < 200_000, "{}", out.len());
    assert!(out.ends_with("  /* ... and 11 more properties */\n}): unknown;"), "{out}");
    assert_eq!(out.matches("?: string;").count(), MAX_MEMBERS - out.matches("?: {").count());
}

#[test]
fn output_is_deterministic_and_keeps_schema_order() {
    let schema = json!({"type": "object", "properties": {"z": {"type": "string"}, "a": {"type": "string"}}});
    assert_eq!(sig(schema.clone()), sig(schema.clone()));
    assert_eq!(sig(schema), "declare function t(params: {\n  z?: string;\n  a?: string;\n}): unknown;");
}

#[test]
fn long_enums_show_the_first_values_and_count_the_rest() {
    let values: Vec<Value> = (0..100_000).map(|i| json!(i)).collect();
    let out = sig(json!({"properties": {"x": {"enum": values}}}));
    let first: Vec<String> = (0..MAX_UNION).map(|i| i.to_string()).collect();
    assert_eq!(out, format!("declare function t(params: {{\n  x?: {} /* ... and 99,980 more */;\n}}): unknown;", first.join(" | ")));
    // Duplicates are not counted as more values.
    let out = sig(json!({"properties": {"x": {"enum": ["a", "a", "b"], "type": "string"}}}));
    assert_eq!(out, "declare function t(params: {\n  x?: \"a\" | \"b\";\n}): unknown;");
}

#[test]
fn long_unions_are_abbreviated_inside_arrays_too() {
    let branches: Vec<Value> = (0..25).map(|i| json!({"const": format!("v{i}")})).collect();
    let out = sig(json!({"properties": {"x": {"type": "array", "items": {"anyOf": branches}}}}));
    let shown: Vec<String> = (0..MAX_UNION).map(|i| format!("\"v{i}\"")).collect();
    assert_eq!(out, format!("declare function t(params: {{\n  x?: ({} /* ... and 5 more */)[];\n}}): unknown;", shown.join(" | ")));
}

#[test]
fn thousands_separators() {
    assert_eq!(
        [0, 7, 999, 1000, 99_990, 1_234_567].map(thousands),
        ["0", "7", "999", "1,000", "99,990", "1,234,567"].map(String::from)
    );
}

#[test]
fn combinator_fan_out_is_bounded_by_the_node_budget() {
    // Every level is an anyOf of 20 refs to the next (one distinct type each): 20^8 nodes
    // unbounded. Rendering stops after MAX_NODES.
    let mut defs = Map::new();
    for level in 0..8 {
        let refs: Vec<Value> = (0..20).map(|_| json!({"$ref": format!("#/$defs/L{}", level + 1)})).collect();
        defs.insert(format!("L{level}"), json!({"anyOf": refs}));
    }
    defs.insert("L8".into(), json!({"type": "string"}));
    let schema = json!({"properties": {"x": {"$ref": "#/$defs/L0"}}, "$defs": defs});
    let (out, nodes) = signature_counted("t", "", &schema);
    assert!(nodes <= MAX_NODES, "{nodes}");
    assert_eq!(out, "declare function t(params: {\n  x?: string | unknown;\n}): unknown;");
}

#[test]
fn wide_objects_stop_at_the_member_budget_and_say_how_many_are_left() {
    let n = MAX_MEMBERS + 10;
    let props: Map<String, Value> = (0..n).map(|i| (format!("p{i:05}"), json!({"type": "string"}))).collect();
    let required: Vec<String> = (0..n).map(|i| format!("p{i:05}")).collect();
    let (out, nodes) = signature_counted("t", "", &json!({"properties": props, "required": required}));
    assert_eq!(nodes, MAX_MEMBERS);
    assert!(out.ends_with(&format!("  p{:05}: string;\n  /* ... and 10 more properties */\n}}): unknown;", MAX_MEMBERS - 1)), "{}", &out[out.len() - 200..]);
}

#[test]
fn literals_show_hidden_characters_as_escapes() {
    let out = sig(json!({"properties": {"x": {"enum": ["a\u{202e}b", "c\u{e0041}"], "default": "d\u{200b}"}}}));
    assert_eq!(out, "declare function t(params: {\n  /** (default \"d\\u200b\") */\n  x?: \"a\\u202eb\" | \"c\\udb40\\udc41\";\n}): unknown;");
}
