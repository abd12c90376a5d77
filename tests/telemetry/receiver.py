"""A small OTLP/HTTP collector for tests/telemetry.rs: it decodes what `toolreg` exports to
`/v1/traces` and `/v1/metrics` with the official `opentelemetry-proto` package (protobuf) and
appends what it received, one JSON object a line, to the file named by its argument:

  {"signal": "span", "name", "kind", "traceId", "spanId", "parentSpanId", "attributes",
   "status": {"code", "message"}, "resource", "scope", "headers"}
  {"signal": "metric", "name", "unit", "type": "sum" | "histogram", "attributes", "value" |
   "count", "sum", "bucketCounts", "explicitBounds", "monotonic", "temporality", "resource"}

It prints its port on stdout's first line, then serves until killed. A body that does not
decode is answered 400 and recorded as {"signal": "bad", "path", "error"}.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

OUT = sys.argv[1]
LOCK = threading.Lock()


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


def attrs(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def items(req, body, resources, scopes, field):
    """(resource, scope, item) for every item of an export request."""
    req.ParseFromString(body)
    for r in getattr(req, resources):
        for sc in getattr(r, scopes):
            for item in getattr(sc, field):
                yield r, sc, item


def spans(body, headers):
    for rs, ss, s in items(trace_service_pb2.ExportTraceServiceRequest(), body, "resource_spans", "scope_spans", "spans"):
        yield {
            "signal": "span",
            "name": s.name,
            "kind": trace_pb2.Span.SpanKind.Name(s.kind),
            "traceId": s.trace_id.hex(),
            "spanId": s.span_id.hex(),
            "parentSpanId": s.parent_span_id.hex(),
            "start": s.start_time_unix_nano,
            "end": s.end_time_unix_nano,
            "attributes": attrs(s.attributes),
            "status": {"code": trace_pb2.Status.StatusCode.Name(s.status.code), "message": s.status.message},
            "resource": attrs(rs.resource.attributes),
            "scope": ss.scope.name,
            "headers": headers,
        }


def metrics(body, headers):
    for rm, _, m in items(metrics_service_pb2.ExportMetricsServiceRequest(), body, "resource_metrics", "scope_metrics", "metrics"):
        base = {"signal": "metric", "name": m.name, "unit": m.unit, "resource": attrs(rm.resource.attributes), "headers": headers}
        kind = m.WhichOneof("data")
        if kind == "sum":
            for p in m.sum.data_points:
                yield {**base, "type": "sum", "attributes": attrs(p.attributes), "value": p.as_int,
                       "monotonic": m.sum.is_monotonic, "temporality": m.sum.aggregation_temporality}
        elif kind == "histogram":
            for p in m.histogram.data_points:
                yield {**base, "type": "histogram", "attributes": attrs(p.attributes), "count": p.count, "sum": p.sum,
                       "bucketCounts": list(p.bucket_counts), "explicitBounds": list(p.explicit_bounds),
                       "temporality": m.histogram.aggregation_temporality}
        else:
            yield {**base, "type": kind}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        headers = {k.lower(): v for k, v in self.headers.items()}
        decode = {"/v1/traces": spans, "/v1/metrics": metrics}.get(self.path)
        try:
            if decode is None or headers.get("content-type") != "application/x-protobuf":
                raise ValueError(f"unexpected {self.path} {headers.get('content-type')}")
            records = list(decode(body, headers))
            status = 200
        except Exception as e:  # noqa: BLE001 - any failure is recorded for the test
            records = [{"signal": "bad", "path": self.path, "error": str(e)}]
            status = 400
        with LOCK, open(OUT, "a", encoding="utf-8") as f:
            for r in records:
                f.write(json.dumps(r) + "\n")
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
