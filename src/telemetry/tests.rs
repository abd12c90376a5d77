use super::export::{pairs, Target};
use super::metrics::{Cell, Hist, Store, BOUNDS, CALLS, SERVER_DURATION};
use super::*;
use crate::secret::{Secret, SecretUrl};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use prost::Message;
use std::collections::HashMap;

fn env_of(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |k| map.get(k).cloned()
}

#[test]
fn defaults_without_settings_or_environment() {
    let t = Target::resolve(&TelemetrySettings::default(), &env_of(&[])).unwrap();
    assert_eq!(t.traces.expose(), "http://localhost:4318/v1/traces");
    assert_eq!(t.metrics.expose(), "http://localhost:4318/v1/metrics");
    assert_eq!(t.resource[0], ("service.name".to_string(), "toolreg".to_string()));
    assert_eq!(t.interval, Duration::from_millis(60_000));
    assert_eq!(t.timeout, Duration::from_millis(10_000));
}

#[test]
fn the_standard_variables_fill_what_the_settings_leave_out() {
    let env = env_of(&[
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
        ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://metrics:9000/m"),
        ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%3Dcret-from-env,x-tenant=acme"),
        ("OTEL_SERVICE_NAME", "from-env"),
        ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,service.name=ignored"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "250"),
    ]);
    let t = Target::resolve(&TelemetrySettings::default(), &env).unwrap();
    assert_eq!(t.traces.expose(), "http://collector:4318/v1/traces");
    assert_eq!(t.metrics.expose(), "http://metrics:9000/m");
    let headers: Vec<(&str, &str)> = t.headers.iter().map(|(k, v)| (k.as_str(), v.expose())).collect();
    assert_eq!(headers, [("api-key", "s=cret-from-env"), ("x-tenant", "acme")]);
    assert!(t.resource.contains(&("service.name".into(), "from-env".into())));
    assert!(t.resource.contains(&("deployment.environment".into(), "test".into())));
    assert_eq!(t.resource.iter().filter(|(k, _)| k == "service.name").count(), 1);
    assert_eq!(t.interval, Duration::from_millis(250));

    // The settings win, a header of the same name (any case) included.
    let settings = TelemetrySettings {
        endpoint: Some(SecretUrl::new("https://own:4318")),
        headers: [("API-Key".to_string(), Secret::new("own-secret-value"))].into(),
        service_name: Some("own".into()),
        export_interval_ms: Some(5),
        ..Default::default()
    };
    let t = Target::resolve(&settings, &env).unwrap();
    assert_eq!(t.traces.expose(), "https://own:4318/v1/traces");
    assert_eq!(t.metrics.expose(), "http://metrics:9000/m", "the signal's own variable is more specific than the base");
    let headers: Vec<(&str, &str)> = t.headers.iter().map(|(k, v)| (k.as_str(), v.expose())).collect();
    assert_eq!(headers, [("x-tenant", "acme"), ("API-Key", "own-secret-value")]);
    assert_eq!(t.resource[0].1, "own");
    assert_eq!(t.interval, Duration::from_millis(export::MIN_INTERVAL_MS), "clamped");
}

#[test]
fn header_values_are_never_printed() {
    let settings = TelemetrySettings { headers: [("authorization".to_string(), Secret::new("Bearer top-secret-token"))].into(), ..Default::default() };
    let t = Target::resolve(&settings, &env_of(&[])).unwrap();
    assert!(!format!("{t:?}").contains("top-secret-token"));
    assert!(!format!("{settings:?}").contains("top-secret-token"));
    let bad = TelemetrySettings { headers: [("authorization".to_string(), Secret::new("top-secret\ntoken"))].into(), ..Default::default() };
    let e = Target::resolve(&bad, &env_of(&[])).unwrap_err();
    assert!(e.contains("authorization") && !e.contains("top-secret"), "{e}");
    let e = Target::resolve(&TelemetrySettings::default(), &env_of(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://user:pw-secret@h")])).unwrap_err();
    assert!(e.contains("not an http") && !e.contains("pw-secret"), "{e}");
}

#[test]
fn pairs_are_trimmed_and_percent_decoded() {
    assert_eq!(pairs(" a = b%20c ,novalue, =x,d=e=f"), [("a".to_string(), "b c".to_string()), ("d".into(), "e=f".into())]);
}

#[test]
fn histogram_buckets_include_their_upper_bound() {
    let mut h = Hist { count: 0, sum: 0.0, min: f64::INFINITY, max: f64::NEG_INFINITY, buckets: [0; BOUNDS.len() + 1] };
    for v in [0.0, 0.01, 0.011, 300.0, 301.0] {
        h.add(v);
    }
    assert_eq!(h.count, 5);
    assert_eq!((h.buckets[0], h.buckets[1], h.buckets[BOUNDS.len() - 1], h.buckets[BOUNDS.len()]), (2, 1, 1, 1));
    assert_eq!((h.min, h.max), (0.0, 301.0));
}

#[test]
fn metrics_add_up_by_attribute_set_in_any_order() {
    let store = Store::new(7);
    store.add(&CALLS, vec![("b", "2".into()), ("a", "1".into())], 1);
    store.add(&CALLS, vec![("a", "1".into()), ("b", "2".into())], 2);
    store.record(&SERVER_DURATION, vec![], 0.5);
    let snap = store.snapshot(3);
    let calls = &snap[CALLS.name].1;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls.values().next(), Some(&Cell::Sum(3)));
    assert!(snap.contains_key(metrics::DROPPED.name));
    let body = otlp::metrics(&otlp::resource(&[("service.name".into(), "t".into())]), &snap, 7, 9);
    let decoded = ExportMetricsServiceRequest::decode(body.as_slice()).unwrap();
    let names: Vec<&str> = decoded.resource_metrics[0].scope_metrics[0].metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["mcp.server.operation.duration", "toolreg.telemetry.dropped", "toolreg.tool.calls"]);
}

#[test]
fn spans_encode_as_otlp() {
    let span = Span {
        trace_id: [1; 16],
        span_id: [2; 8],
        parent: Some([3; 8]),
        name: "tools/call echo".into(),
        kind: Kind::Client,
        start: 10,
        end: 20,
        attrs: vec![("gen_ai.tool.name", "echo".into()), ("n", Val::Int(4))],
        error: Some("tool_error".into()),
    };
    let body = otlp::traces(&otlp::resource(&[("service.name".into(), "t".into())]), &[Box::new(span)]);
    let decoded = ExportTraceServiceRequest::decode(body.as_slice()).unwrap();
    let s = &decoded.resource_spans[0].scope_spans[0].spans[0];
    assert_eq!((s.name.as_str(), s.kind, s.parent_span_id.as_slice(), s.start_time_unix_nano, s.end_time_unix_nano), ("tools/call echo", 3, &[3u8; 8][..], 10, 20));
    assert_eq!(s.status.as_ref().map(|st| (st.code, st.message.as_str())), Some((2, "tool_error")));
    let first = s.attributes[0].value.as_ref().and_then(|v| v.value.clone());
    assert_eq!(first, Some(any_value::Value::StringValue("echo".into())));
}

#[test]
fn off_passes_the_future_through_and_records_nothing() {
    let off = Telemetry::default();
    assert!(!off.is_on());
    off.approval(crate::audit::Decision::Approved);
    assert_eq!(off.dropped(), 0);
    let fut = request(None, async { 5 }, |_| None);
    assert!(matches!(fut, futures::future::Either::Left(_)));
}

/// A collector that takes connections and never answers: the queue fills, spans are dropped
/// and counted, and no record waits.
#[test]
fn a_black_hole_collector_drops_spans_and_blocks_nothing() {
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", hole.local_addr().unwrap());
    let settings = TelemetrySettings { endpoint: Some(SecretUrl::new(url)), timeout_ms: Some(600_000), ..Default::default() };
    let t = Telemetry::start(&settings, &env_of(&[])).unwrap();
    let sent = 2 * (QUEUE + export::BATCH);
    for i in 0..sent {
        t.ran(Run {
            tool: "echo",
            upstream: Some(("fixture", "echo")),
            call_id: &i.to_string(),
            reached: Reached::Direct,
            outcome: Outcome::Ok,
            failure: None,
            started: SystemTime::now(),
            took: Duration::from_millis(1),
        });
    }
    // At most a batch in the post that hangs and a queue behind it: the rest were dropped.
    assert!(t.dropped() >= (sent - QUEUE - export::BATCH) as u64, "dropped {}", t.dropped());
    drop(hole);
}
