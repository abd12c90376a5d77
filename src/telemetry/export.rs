//! The exporter: where to send (`Target`, from the settings and the standard
//! `OTEL_EXPORTER_OTLP_*` variables) and the thread that sends. The thread runs a
//! single-threaded runtime of its own, so a slow collector holds none of the faces' threads:
//! spans go out every `SPAN_DELAY` (or once `BATCH` are waiting), metrics every interval, both
//! at a flush; each post is bounded by the timeout, and what a failed post carried is lost.

use super::metrics::Store;
use super::{otlp, Span};
use crate::secret::redactor::Redactor;
use crate::secret::{Secret, SecretUrl};
use crate::settings::TelemetrySettings;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a finished span waits for company before it is sent.
pub const SPAN_DELAY: Duration = Duration::from_secs(1);
/// How long the exporter, woken by a span, lets others gather before it looks again.
pub const GATHER: Duration = Duration::from_millis(200);
/// Spans sent in one post, at most.
pub const BATCH: usize = 512;
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";
pub const DEFAULT_INTERVAL_MS: u64 = 60_000;
pub const MIN_INTERVAL_MS: u64 = 100;
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

pub enum Msg {
    Span(Box<Span>),
    /// Everything queued before it sent, and the metrics; then the sender is told.
    Flush(std::sync::mpsc::SyncSender<()>),
}

/// What the callers and the exporter both see.
#[derive(Default)]
pub struct Shared {
    dropped: AtomicU64,
    /// A loss was said in the log and no export has succeeded since.
    warned: AtomicBool,
}

impl Shared {
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    pub fn lose(&self, n: u64, why: &dyn Fn() -> String) {
        self.dropped.fetch_add(n, Ordering::Relaxed);
        self.warn(why);
    }

    fn warn(&self, why: &dyn Fn() -> String) {
        if !self.warned.swap(true, Ordering::Relaxed) {
            tracing::warn!("telemetry: {}; spans are lost (counted) until an export succeeds, said once", why());
        }
    }

    fn exported(&self) {
        if self.warned.swap(false, Ordering::Relaxed) {
            tracing::info!("telemetry: the collector takes exports again ({} spans lost so far)", self.dropped());
        }
    }
}

/// Where exports go and how.
pub struct Target {
    pub traces: SecretUrl,
    pub metrics: SecretUrl,
    pub headers: Vec<(String, Secret)>,
    /// `service.name` and the rest of the resource.
    pub resource: Vec<(String, String)>,
    pub interval: Duration,
    pub timeout: Duration,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("traces", &self.traces)
            .field("metrics", &self.metrics)
            .field("headers", &self.headers.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>())
            .field("resource", &self.resource)
            .finish()
    }
}

/// `k1=v1,k2=v2` (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_RESOURCE_ATTRIBUTES`), values
/// percent-decoded; a pair without `=` is skipped.
pub fn pairs(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), percent_encoding::percent_decode_str(v.trim()).decode_utf8_lossy().into_owned()))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

impl Target {
    /// The settings first, then the environment (`env`), then the defaults.
    pub fn resolve(s: &TelemetrySettings, env: &dyn Fn(&str) -> Option<String>) -> Result<Target, String> {
        let env = |k: &str| env(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let base = s.endpoint.as_ref().map(|u| u.expose().to_string()).or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT")).unwrap_or_else(|| DEFAULT_ENDPOINT.into());
        let signal = |own: &Option<SecretUrl>, var: &str, path: &str| {
            let url = own.as_ref().map(|u| u.expose().to_string()).or_else(|| env(var)).unwrap_or_else(|| format!("{}{path}", base.trim_end_matches('/')));
            let url = SecretUrl::new(url);
            match url.expose().split_once("://") {
                Some(("http" | "https", rest)) if !rest.is_empty() => Ok(url),
                _ => Err(format!("telemetry: {} is not an http or https URL", url.redacted())),
            }
        };
        let traces = signal(&s.traces_endpoint, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "/v1/traces")?;
        let metrics = signal(&s.metrics_endpoint, "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "/v1/metrics")?;
        let mut headers: Vec<(String, Secret)> = env("OTEL_EXPORTER_OTLP_HEADERS").map(|h| pairs(&h)).unwrap_or_default().into_iter().map(|(k, v)| (k, Secret::new(v))).collect();
        headers.retain(|(k, _)| !s.headers.keys().any(|own| own.eq_ignore_ascii_case(k)));
        headers.extend(s.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (k, v) in &headers {
            http::HeaderName::from_bytes(k.as_bytes()).map_err(|_| format!("telemetry.headers: {k:?} is not a valid header name"))?;
            http::HeaderValue::from_str(v.expose()).map_err(|_| format!("telemetry.headers: the value of {k:?} is not a valid header value"))?;
        }
        let mut resource: Vec<(String, String)> = env("OTEL_RESOURCE_ATTRIBUTES").map(|a| pairs(&a)).unwrap_or_default();
        let service = s.service_name.clone().or_else(|| env("OTEL_SERVICE_NAME"));
        let service = service.or_else(|| resource.iter().find(|(k, _)| k == "service.name").map(|(_, v)| v.clone())).unwrap_or_else(|| "toolreg".into());
        resource.retain(|(k, _)| k != "service.name" && k != "service.version" && !k.starts_with("telemetry.sdk."));
        resource.splice(
            0..0,
            [
                ("service.name".to_string(), service),
                ("service.version".into(), env!("CARGO_PKG_VERSION").into()),
                ("telemetry.sdk.name".into(), "toolreg".into()),
                ("telemetry.sdk.language".into(), "rust".into()),
            ],
        );
        let ms = |own: Option<u64>, var: &str, default: u64| own.or_else(|| env(var).and_then(|v| v.parse().ok())).unwrap_or(default);
        let interval = ms(s.export_interval_ms, "OTEL_METRIC_EXPORT_INTERVAL", DEFAULT_INTERVAL_MS).max(MIN_INTERVAL_MS);
        let timeout = ms(s.timeout_ms, "OTEL_EXPORTER_OTLP_TIMEOUT", DEFAULT_TIMEOUT_MS).max(1);
        Ok(Target { traces, metrics, headers, resource, interval: Duration::from_millis(interval), timeout: Duration::from_millis(timeout) })
    }
}

/// Starts the exporter's thread.
pub fn spawn(target: Target, rx: tokio::sync::mpsc::Receiver<Msg>, store: Arc<Store>, shared: Arc<Shared>) -> Result<(), String> {
    // reqwest has rustls but no crypto provider: ring, unless the process chose one.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut headers = http::HeaderMap::new();
    for (k, v) in &target.headers {
        let (Ok(name), Ok(mut value)) = (http::HeaderName::from_bytes(k.as_bytes()), http::HeaderValue::from_str(v.expose())) else { continue };
        // Out of any `Debug` of a request.
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/x-protobuf"));
    let client = reqwest::Client::builder().default_headers(headers).timeout(target.timeout).build().map_err(|e| format!("telemetry: cannot build the HTTP client: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| format!("telemetry: cannot start the exporter: {e}"))?;
    std::thread::Builder::new()
        .name("toolreg-otlp".into())
        .spawn(move || {
            // The header values and the URLs' credentials, redacted from every log line while
            // the exporter lives (a foreign error may quote them).
            let mut secrets: Vec<String> = target.headers.iter().map(|(_, v)| v.expose().to_string()).collect();
            secrets.extend(target.traces.secret_parts().into_iter().chain(target.metrics.secret_parts()));
            let _redactor = Redactor::new(secrets);
            let exporter = Exporter { client, resource: otlp::resource(&target.resource), target, store, shared };
            runtime.block_on(exporter.run(rx));
        })
        .map_err(|e| format!("telemetry: cannot start the exporter: {e}"))?;
    Ok(())
}

struct Exporter {
    client: reqwest::Client,
    resource: opentelemetry_proto::tonic::resource::v1::Resource,
    target: Target,
    store: Arc<Store>,
    shared: Arc<Shared>,
}

impl Exporter {
    async fn run(self, mut rx: tokio::sync::mpsc::Receiver<Msg>) {
        let mut batch: Vec<Box<Span>> = Vec::new();
        let mut spans_due = tokio::time::interval(SPAN_DELAY);
        let mut metrics_due = tokio::time::interval(self.target.interval);
        spans_due.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        metrics_due.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        metrics_due.tick().await;
        loop {
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(Msg::Span(s)) => {
                        // Woken by a span: others gather for `GATHER` before the next wake-up,
                        // so a busy face wakes this thread a few times a second, not per call.
                        batch.push(s);
                        tokio::time::sleep(GATHER).await;
                        let mut flush = None;
                        while batch.len() < BATCH {
                            match rx.try_recv() {
                                Ok(Msg::Span(s)) => batch.push(s),
                                Ok(Msg::Flush(done)) => {
                                    flush = Some(done);
                                    break;
                                }
                                Err(_) => break,
                            }
                        }
                        if batch.len() >= BATCH || flush.is_some() {
                            self.spans(&mut batch).await;
                        }
                        if let Some(done) = flush {
                            self.metrics().await;
                            let _ = done.try_send(());
                        }
                    }
                    Some(Msg::Flush(done)) => {
                        while let Ok(Msg::Span(s)) = rx.try_recv() {
                            batch.push(s);
                        }
                        self.spans(&mut batch).await;
                        self.metrics().await;
                        let _ = done.try_send(());
                    }
                    None => {
                        self.spans(&mut batch).await;
                        self.metrics().await;
                        return;
                    }
                },
                _ = spans_due.tick() => self.spans(&mut batch).await,
                _ = metrics_due.tick() => self.metrics().await,
            }
        }
    }

    async fn spans(&self, batch: &mut Vec<Box<Span>>) {
        for chunk in std::mem::take(batch).chunks(BATCH) {
            let body = otlp::traces(&self.resource, chunk);
            if !self.post(&self.target.traces, body).await {
                self.shared.lose(chunk.len() as u64, &|| "the collector did not take spans".into());
            }
        }
    }

    async fn metrics(&self) {
        let snapshot = self.store.snapshot(self.shared.dropped());
        if snapshot.is_empty() {
            return;
        }
        let body = otlp::metrics(&self.resource, &snapshot, self.store.start, super::now());
        self.post(&self.target.metrics, body).await;
    }

    /// Whether the collector took `body` (a 2xx answer within the timeout).
    async fn post(&self, url: &SecretUrl, body: Vec<u8>) -> bool {
        match self.client.post(url.expose()).body(body).send().await {
            Ok(r) if r.status().is_success() => {
                self.shared.exported();
                true
            }
            Ok(r) => {
                self.shared.warn(&|| format!("{} answered HTTP {}", url.redacted(), r.status().as_u16()));
                false
            }
            Err(e) => {
                let why = if e.is_timeout() { "no answer within the timeout".to_string() } else { crate::secret::redact_urls_in(&e.to_string()).into_owned() };
                self.shared.warn(&|| format!("cannot export to {}: {why}", url.redacted()));
                false
            }
        }
    }
}
