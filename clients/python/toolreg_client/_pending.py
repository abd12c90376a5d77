"""Hand-written stand-ins for methods that the spec fixes but that have no schema file in
protocol/ yet. Every SPEC 8 method has a schema today, so this module is empty; when the spec
names a method before the sidecar has its schema, type it here until `gen.py` picks it up (the
test `test_every_schema_request_has_a_method` lists requests that lack a client method)."""
from __future__ import annotations
