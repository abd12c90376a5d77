//! Validation of tool-call arguments against a tool's JSON Schema.
//!
//! Uses the `jsonschema` crate with default features off, so a `$ref` can never
//! trigger a network (or file) fetch: a reference to another document is never
//! dereferenced (SSRF, and a schema that changes behind our back) and the part it
//! names is left unchecked here, as `tool_inspect` shows it (`unknown`); the server
//! checks its own arguments. A tool with such a schema stays callable.
//! Compiled validators are cached by content: a 64-bit hash picks the bucket and the schema
//! itself is compared on a hit, so a schema is only ever checked by its own validator (a
//! crafted hash collision finds a different schema in the bucket and gets compiled anew).
//! Callers that already hold a hash of the schema's content (a registry entry's) pass it as
//! the key, so a call hashes nothing.
//!
//! A schema that does not compile is `Invalid::Schema`, never an argument error: no argument
//! can ever satisfy it, so repair would be pointless.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// At most this many individual errors are reported per call.
const MAX_ERRORS: usize = 5;
/// Individual messages are cut to this many characters (instances can be huge).
const MAX_MESSAGE_CHARS: usize = 300;
/// The cache is cleared when it grows beyond this many schemas.
const MAX_CACHE_ENTRIES: usize = 4096;

/// A compiled validator, or why the schema does not compile.
type Compiled = Result<Arc<jsonschema::Validator>, String>;

/// One cached schema: the schema itself, compared on every hit, and what it compiled to.
struct Slot {
    schema: Value,
    compiled: Compiled,
}

/// Why arguments were not accepted.
#[derive(Clone, Debug, PartialEq)]
pub enum Invalid {
    /// The tool's schema does not compile: no arguments can pass. The compiler's message.
    Schema(String),
    /// The arguments break the schema: "at /path: message" lines (at most 5, then "... and N more").
    Arguments(Vec<String>),
}

/// A thread-safe cache of compiled validators keyed by schema content. A clone shares the
/// cache (so a call can take it to the blocking pool).
#[derive(Default, Clone)]
pub struct Validators {
    /// Buckets by hash; a bucket holds more than one slot only on a hash collision.
    cache: Arc<Mutex<HashMap<u64, Vec<Slot>>>>,
}

impl Validators {
    pub fn new() -> Self {
        Self::default()
    }

    /// Ok(()) or the list of errors as readable strings "at /path: message"
    /// (at most 5, followed by a "... and N more" line when there are more);
    /// a schema that does not compile is one "tool schema is invalid: ..." line.
    pub fn validate(&self, schema: &Value, args: &Value) -> Result<(), Vec<String>> {
        self.check(schema_key(schema), schema, args).map_err(|e| match e {
            Invalid::Schema(e) => vec![format!("tool schema is invalid: {e}")],
            Invalid::Arguments(errors) => errors,
        })
    }

    /// Validates `args` against `schema`, whose cache bucket is `key`: any hash that is a
    /// function of the schema's content (`schema_key`, or a registry entry's content hash).
    /// The key only picks the bucket; the schema is compared exactly.
    pub fn check(&self, key: u64, schema: &Value, args: &Value) -> Result<(), Invalid> {
        if trivial(schema) {
            return Ok(());
        }
        let validator = self.compiled(key, schema).map_err(Invalid::Schema)?;
        report(&validator, args)
    }

    /// `check` when it needs no compilation (the schema is trivial or compiled already), else
    /// `None`: compiling a big schema takes milliseconds to seconds, so a caller on an async
    /// thread checks here first and compiles on the blocking pool.
    pub fn check_compiled(&self, key: u64, schema: &Value, args: &Value) -> Option<Result<(), Invalid>> {
        if trivial(schema) {
            return Some(Ok(()));
        }
        let compiled = Self::find(&self.lock(), key, schema)?;
        Some(compiled.map_err(Invalid::Schema).and_then(|validator| report(&validator, args)))
    }

    fn compiled(&self, key: u64, schema: &Value) -> Compiled {
        if let Some(hit) = Self::find(&self.lock(), key, schema) {
            return hit;
        }
        // Compile outside the lock: compilation of big schemas can take a while.
        let built = compile(schema);
        let mut cache = self.lock();
        if let Some(hit) = Self::find(&cache, key, schema) {
            return hit; // compiled meanwhile by another call
        }
        if cache.len() >= MAX_CACHE_ENTRIES {
            cache.clear();
        }
        cache.entry(key).or_default().push(Slot { schema: schema.clone(), compiled: built.clone() });
        built
    }

    /// The slot for exactly this schema (`Value` equality ignores object key order).
    fn find(cache: &HashMap<u64, Vec<Slot>>, key: u64, schema: &Value) -> Option<Compiled> {
        cache.get(&key)?.iter().find(|s| s.schema == *schema).map(|s| s.compiled.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Vec<Slot>>> {
        // A poisoned cache is still a valid cache (entries are inserted atomically).
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Schemas that every argument passes, with nothing to compile.
fn trivial(schema: &Value) -> bool {
    match schema {
        Value::Bool(true) => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// The validator's verdict on `args`: at most `MAX_ERRORS` errors, then a count of the rest.
fn report(validator: &jsonschema::Validator, args: &Value) -> Result<(), Invalid> {
    let mut out = Vec::new();
    let mut extra = 0usize;
    for error in validator.iter_errors(args) {
        if out.len() < MAX_ERRORS {
            let path = error.instance_path().to_string();
            let path = if path.is_empty() { "/".to_string() } else { path };
            out.push(format!("at {path}: {}", truncate(&error.to_string())));
        } else {
            extra += 1;
        }
    }
    if out.is_empty() {
        return Ok(());
    }
    if extra > 0 {
        out.push(format!("... and {extra} more"));
    }
    Err(Invalid::Arguments(out))
}

fn compile(schema: &Value) -> Compiled {
    // Draft 2020-12 unless the schema names a known draft via `$schema`;
    // an unrecognised `$schema` URI also falls back to 2020-12 (never fetched).
    let result = std::panic::catch_unwind(|| {
        let mut options = jsonschema::options();
        let detected = jsonschema::Draft::Draft202012.detect(schema);
        if detected == jsonschema::Draft::Unknown {
            options = options.with_draft(jsonschema::Draft::Draft202012);
        }
        options.with_retriever(Unchecked).build(schema)
    });
    match result {
        Ok(Ok(v)) => Ok(Arc::new(v)),
        Ok(Err(e)) => Err(truncate(&e.to_string())),
        Err(_) => Err("the validator could not compile it".to_string()),
    }
}

/// Every document outside the schema reads as `{}`, which any value satisfies: nothing is
/// fetched, and what it would constrain is not checked here.
struct Unchecked;

impl jsonschema::Retrieve for Unchecked {
    fn retrieve(&self, _: &jsonschema::Uri<String>) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Value::Object(Default::default()))
    }
}

fn truncate(s: &str) -> String {
    if s.chars().count() <= MAX_MESSAGE_CHARS {
        return s.to_string();
    }
    let mut t: String = s.chars().take(MAX_MESSAGE_CHARS).collect();
    t.push('…');
    t
}

/// Hash of the schema's content, independent of object key order (an object's
/// entries are combined commutatively), so two schemas differing only in key
/// order share a cache entry. Allocation-free. A bucket key only: hits compare content.
pub fn schema_key(schema: &Value) -> u64 {
    fingerprint(schema)
}

fn fingerprint(v: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    match v {
        Value::Null => 0u8.hash(&mut h),
        Value::Bool(b) => (1u8, *b).hash(&mut h),
        Value::Number(n) => {
            2u8.hash(&mut h);
            if let Some(i) = n.as_i64() {
                (0u8, i).hash(&mut h);
            } else if let Some(u) = n.as_u64() {
                (1u8, u).hash(&mut h);
            } else {
                (2u8, n.as_f64().map(f64::to_bits)).hash(&mut h);
            }
        }
        Value::String(s) => (3u8, s).hash(&mut h),
        Value::Array(items) => {
            (4u8, items.len()).hash(&mut h);
            for item in items {
                fingerprint(item).hash(&mut h);
            }
        }
        Value::Object(map) => {
            let mut sum = 0u64;
            for (k, v) in map {
                let mut entry = DefaultHasher::new();
                (k, fingerprint(v)).hash(&mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
            (5u8, map.len(), sum).hash(&mut h);
        }
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errs(schema: Value, args: Value) -> Vec<String> {
        Validators::new().validate(&schema, &args).unwrap_err()
    }

    #[test]
    fn accepts_valid_arguments() {
        let v = Validators::new();
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        assert_eq!(v.validate(&schema, &json!({"q": "x"})), Ok(()));
    }

    #[test]
    fn true_and_empty_schemas_accept_everything() {
        let v = Validators::new();
        for args in [json!({}), json!({"a": 1}), json!("s"), json!(null), json!([1])] {
            assert_eq!(v.validate(&json!(true), &args), Ok(()));
            assert_eq!(v.validate(&json!({}), &args), Ok(()));
        }
    }

    #[test]
    fn false_schema_rejects() {
        let e = errs(json!(false), json!({}));
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("at /: "), "{e:?}");
    }

    #[test]
    fn missing_required_reports_root_path() {
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        assert_eq!(errs(schema, json!({})), vec![r#"at /: "q" is a required property"#.to_string()]);
    }

    #[test]
    fn wrong_type_reports_nested_path() {
        let schema = json!({"type": "object", "properties": {
            "f": {"type": "object", "properties": {"n": {"type": "integer"}}}}});
        assert_eq!(
            errs(schema, json!({"f": {"n": "5"}})),
            vec![r#"at /f/n: "5" is not of type "integer""#.to_string()]
        );
    }

    #[test]
    fn schema_without_type_works() {
        let schema = json!({"properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let v = Validators::new();
        assert_eq!(v.validate(&schema, &json!({"n": 1})), Ok(()));
        assert_eq!(
            v.validate(&schema, &json!({"n": true})),
            Err(vec![r#"at /n: true is not of type "integer""#.to_string()])
        );
    }

    #[test]
    fn at_most_five_errors_plus_summary() {
        let schema = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        let args = json!({"a": "x", "b": "x", "c": "x", "d": "x", "e": "x", "f": "x", "g": "x"});
        let e = errs(schema, args);
        assert_eq!(e.len(), 6);
        assert_eq!(e[0], r#"at /a: "x" is not of type "integer""#);
        assert_eq!(e[5], "... and 2 more");
    }

    #[test]
    fn invalid_schema_is_a_single_clean_error() {
        let e = errs(json!({"type": "strnig"}), json!({}));
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("tool schema is invalid: "), "{e:?}");
        let e = errs(json!({"type": "object", "properties": {"a": {"pattern": "(unclosed"}}}), json!({"a": "x"}));
        assert!(e[0].starts_with("tool schema is invalid: "), "{e:?}");
    }

    #[test]
    fn remote_ref_is_not_fetched_and_its_part_is_unchecked() {
        // Nothing listens at this address: a fetch would fail to compile the schema.
        let schema = json!({"type": "object", "required": ["user"], "properties": {
            "user": {"$ref": "http://127.0.0.1:9/profile.json"}, "n": {"type": "integer"}}});
        assert_eq!(Validators::new().validate(&schema, &json!({"user": {"anything": [1, 2]}})), Ok(()));
        // The local parts are still checked.
        let e = errs(schema.clone(), json!({"user": 1, "n": "x"}));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].starts_with("at /n: "), "{e:?}");
        assert_eq!(errs(schema, json!({})).len(), 1);
    }

    #[test]
    fn local_refs_resolve() {
        let schema = json!({
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/P"}, "q": {"$ref": "#/definitions/Q"}},
            "$defs": {"P": {"type": "integer"}},
            "definitions": {"Q": {"type": "boolean"}}
        });
        let v = Validators::new();
        assert_eq!(v.validate(&schema, &json!({"p": 1, "q": true})), Ok(()));
        assert_eq!(
            v.validate(&schema, &json!({"p": 1, "q": 2})),
            Err(vec![r#"at /q: 2 is not of type "boolean""#.to_string()])
        );
    }

    #[test]
    fn draft_2020_12_is_the_default_and_schema_keyword_is_respected() {
        // prefixItems is a 2020-12 keyword; under draft-07 it is ignored.
        let v = Validators::new();
        let modern = json!({"type": "array", "prefixItems": [{"type": "integer"}]});
        assert!(v.validate(&modern, &json!(["x"])).is_err());
        let draft7 = json!({"$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array", "prefixItems": [{"type": "integer"}]});
        assert_eq!(v.validate(&draft7, &json!(["x"])), Ok(()));
        let unknown = json!({"$schema": "https://example.com/my-meta",
            "type": "array", "prefixItems": [{"type": "integer"}]});
        assert!(v.validate(&unknown, &json!(["x"])).is_err());
        assert_eq!(v.validate(&unknown, &json!([1])), Ok(()));
    }

    #[test]
    fn cache_key_ignores_key_order_and_distinguishes_content() {
        let a = json!({"type": "object", "required": ["x"]});
        let b = json!({"required": ["x"], "type": "object"});
        let c = json!({"required": ["y"], "type": "object"});
        assert_eq!(schema_key(&a), schema_key(&b));
        assert_ne!(schema_key(&a), schema_key(&c));
        let nested_a = json!({"properties": {"x": {"type": "string", "minLength": 1}}});
        let nested_b = json!({"properties": {"x": {"minLength": 1, "type": "string"}}});
        assert_eq!(schema_key(&nested_a), schema_key(&nested_b));
        assert_ne!(schema_key(&json!({"a": {"b": 1}})), schema_key(&json!({"b": {"a": 1}})));
        assert_ne!(schema_key(&json!({"a": 1, "b": 2})), schema_key(&json!({"a": 2, "b": 1})));
        assert_ne!(schema_key(&json!(["a", "b"])), schema_key(&json!(["b", "a"])));
        let v = Validators::new();
        assert!(v.validate(&a, &json!({})).is_err());
        assert!(v.validate(&b, &json!({})).is_err());
        assert_eq!(v.lock().len(), 1);
    }

    #[test]
    fn two_schemas_never_share_a_validator_even_under_one_key() {
        // The same bucket key for different schemas, as a crafted hash collision would give.
        let v = Validators::new();
        let needs_x = json!({"type": "object", "required": ["x"]});
        let needs_y = json!({"type": "object", "required": ["y"]});
        let bad = json!({"type": "object", "properties": {"a": {"type": "nonsense"}}});
        assert_eq!(v.check(7, &needs_x, &json!({"x": 1})), Ok(()));
        assert!(matches!(v.check(7, &needs_y, &json!({"x": 1})), Err(Invalid::Arguments(_))));
        assert_eq!(v.check(7, &needs_y, &json!({"y": 1})), Ok(()));
        assert!(matches!(v.check(7, &bad, &json!({})), Err(Invalid::Schema(_))));
        // Each keeps its own validator afterwards, whatever was compiled last.
        assert!(v.check(7, &needs_x, &json!({"y": 1})).is_err());
        assert_eq!(v.check(7, &needs_x, &json!({"x": 1})), Ok(()));
        assert_eq!(v.lock().get(&7).map(Vec::len), Some(3));
    }

    #[test]
    fn a_schema_that_does_not_compile_is_not_an_argument_error() {
        let v = Validators::new();
        let bad = json!({"type": "object", "properties": {"a": {"type": "nonsense"}}});
        match v.check(schema_key(&bad), &bad, &json!({"a": 1})) {
            Err(Invalid::Schema(e)) => assert!(e.contains("nonsense"), "{e}"),
            other => panic!("expected a schema error, got {other:?}"),
        }
    }

    #[test]
    fn long_messages_are_truncated() {
        let schema = json!({"type": "object", "properties": {"s": {"type": "integer"}}});
        let e = errs(schema, json!({"s": "y".repeat(2000)}));
        assert!(e[0].chars().count() < 400, "{}", e[0].len());
        assert!(e[0].ends_with('…'));
    }

    #[test]
    fn validators_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<Validators>();
    }
}
