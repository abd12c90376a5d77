//! Spans and metrics as OTLP's protobuf messages (`opentelemetry-proto`'s prost types, no
//! gRPC), encoded for `POST /v1/traces` and `/v1/metrics`.

use super::metrics::{Cell, Snapshot, BOUNDS};
use super::{Kind, Span, Val};
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::metrics::v1 as pm;
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1 as pt;
use prost::Message;

/// The instrumentation scope: toolreg itself.
fn scope() -> InstrumentationScope {
    InstrumentationScope { name: "toolreg".into(), version: env!("CARGO_PKG_VERSION").into(), ..Default::default() }
}

fn kv(key: &str, v: &Val) -> KeyValue {
    let value = match v {
        Val::Str(s) => any_value::Value::StringValue(s.clone()),
        Val::Int(i) => any_value::Value::IntValue(*i),
    };
    KeyValue { key: key.into(), value: Some(AnyValue { value: Some(value) }), ..Default::default() }
}

/// The resource every export describes: `service.name` and the rest (`export::Target`).
pub fn resource(attrs: &[(String, String)]) -> Resource {
    Resource { attributes: attrs.iter().map(|(k, v)| kv(k, &Val::Str(v.clone()))).collect(), ..Default::default() }
}

pub fn traces(resource: &Resource, spans: &[Box<Span>]) -> Vec<u8> {
    let spans = spans
        .iter()
        .map(|s| pt::Span {
            trace_id: s.trace_id.to_vec(),
            span_id: s.span_id.to_vec(),
            parent_span_id: s.parent.map(|p| p.to_vec()).unwrap_or_default(),
            name: s.name.clone(),
            kind: match s.kind {
                Kind::Internal => pt::span::SpanKind::Internal,
                Kind::Server => pt::span::SpanKind::Server,
                Kind::Client => pt::span::SpanKind::Client,
            } as i32,
            start_time_unix_nano: s.start,
            end_time_unix_nano: s.end,
            attributes: s.attrs.iter().map(|(k, v)| kv(k, v)).collect(),
            status: s.error.as_ref().map(|e| pt::Status { message: e.clone(), code: pt::status::StatusCode::Error as i32 }),
            ..Default::default()
        })
        .collect();
    let request = ExportTraceServiceRequest {
        resource_spans: vec![pt::ResourceSpans {
            resource: Some(resource.clone()),
            scope_spans: vec![pt::ScopeSpans { scope: Some(scope()), spans, ..Default::default() }],
            ..Default::default()
        }],
    };
    request.encode_to_vec()
}

pub fn metrics(resource: &Resource, snapshot: &Snapshot, start: u64, now: u64) -> Vec<u8> {
    let labels = |l: &[(&'static str, String)]| l.iter().map(|(k, v)| kv(k, &Val::Str(v.clone()))).collect::<Vec<_>>();
    let cumulative = pm::AggregationTemporality::Cumulative as i32;
    let metrics = snapshot
        .values()
        .map(|(def, cells)| {
            let data = if def.histogram {
                let data_points = cells
                    .iter()
                    .filter_map(|(l, c)| match c {
                        Cell::Hist(h) => Some(pm::HistogramDataPoint {
                            attributes: labels(l),
                            start_time_unix_nano: start,
                            time_unix_nano: now,
                            count: h.count,
                            sum: Some(h.sum),
                            bucket_counts: h.buckets.to_vec(),
                            explicit_bounds: BOUNDS.to_vec(),
                            min: Some(h.min),
                            max: Some(h.max),
                            ..Default::default()
                        }),
                        Cell::Sum(_) => None,
                    })
                    .collect();
                pm::metric::Data::Histogram(pm::Histogram { data_points, aggregation_temporality: cumulative })
            } else {
                let data_points = cells
                    .iter()
                    .filter_map(|(l, c)| match c {
                        Cell::Sum(n) => Some(pm::NumberDataPoint {
                            attributes: labels(l),
                            start_time_unix_nano: start,
                            time_unix_nano: now,
                            value: Some(pm::number_data_point::Value::AsInt(i64::try_from(*n).unwrap_or(i64::MAX))),
                            ..Default::default()
                        }),
                        Cell::Hist(_) => None,
                    })
                    .collect();
                pm::metric::Data::Sum(pm::Sum { data_points, aggregation_temporality: cumulative, is_monotonic: true })
            };
            pm::Metric { name: def.name.into(), description: def.description.into(), unit: def.unit.into(), data: Some(data), ..Default::default() }
        })
        .collect();
    let request = ExportMetricsServiceRequest {
        resource_metrics: vec![pm::ResourceMetrics {
            resource: Some(resource.clone()),
            scope_metrics: vec![pm::ScopeMetrics { scope: Some(scope()), metrics, ..Default::default() }],
            ..Default::default()
        }],
    };
    request.encode_to_vec()
}
