//! Arbitrary bytes through the path every host message takes before a handler runs: frames out
//! of the codec, each body classified as the server's main loop does it (`server::on_frame`:
//! JSON, one object, `"jsonrpc": "2.0"`, an integer or string id; then request, notification or
//! response), and a request's params parsed into its method's protocol type as the method table
//! does (`dispatch::parse`: absent or null means `{}`, a list is refused).
//!
//! The classification mirrors `on_frame`, which is private to the server; once the server
//! exposes its classifier, this target should call it instead. Checks: nothing panics.
#![no_main]

use bytes::BytesMut;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tokio_util::codec::Decoder;
use toolreg::protocol::{self as p, Request};
use toolreg::transport::codec::{ContentLengthCodec, Frame};

fn params<R: Request>(params: Option<&Value>) {
    let params = match params {
        None | Some(Value::Null) => Value::Object(Default::default()),
        Some(Value::Array(_)) => return,
        Some(v) => v.clone(),
    };
    let _ = serde_json::from_value::<R::Params>(params);
}

fn request(method: &str, p: Option<&Value>) {
    match method {
        p::Initialize::METHOD => params::<p::Initialize>(p),
        p::Shutdown::METHOD => params::<p::Shutdown>(p),
        p::RegistryRegister::METHOD => params::<p::RegistryRegister>(p),
        p::RegistryDeregister::METHOD => params::<p::RegistryDeregister>(p),
        p::RegistryList::METHOD => params::<p::RegistryList>(p),
        p::RegistrySelectActive::METHOD => params::<p::RegistrySelectActive>(p),
        p::ExpositionPlan::METHOD => params::<p::ExpositionPlan>(p),
        p::RegistryResolveMcpToolIds::METHOD => params::<p::RegistryResolveMcpToolIds>(p),
        p::RegistrySyncMcp::METHOD => params::<p::RegistrySyncMcp>(p),
        p::ToolInvoke::METHOD => params::<p::ToolInvoke>(p),
        p::CatalogSetServers::METHOD => params::<p::CatalogSetServers>(p),
        p::CatalogListTools::METHOD => params::<p::CatalogListTools>(p),
        p::CatalogRefresh::METHOD => params::<p::CatalogRefresh>(p),
        p::CatalogRestart::METHOD => params::<p::CatalogRestart>(p),
        p::CatalogStatus::METHOD => params::<p::CatalogStatus>(p),
        p::ApprovalRespond::METHOD => params::<p::ApprovalRespond>(p),
        _ => {}
    }
}

fn classify(body: &[u8]) {
    let Ok(msg) = serde_json::from_slice::<Value>(body) else { return };
    let Value::Object(obj) = &msg else { return };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return;
    }
    let id = obj.get("id");
    if id.is_some_and(|id| !(id.is_string() || id.is_i64() || id.is_u64())) {
        return;
    }
    if let (Some(method), Some(_)) = (obj.get("method").and_then(Value::as_str), id) {
        request(method, obj.get("params"));
    }
}

fuzz_target!(|data: &[u8]| {
    let mut codec = ContentLengthCodec::new(1 << 20);
    let mut buf = BytesMut::from(data);
    while let Some(frame) = codec.decode(&mut buf).expect("the decoder never fails the stream") {
        if let Frame::Message(body) = frame {
            classify(&body);
        }
    }
    // The input as one unframed body too, so the JSON side is reached without a header.
    classify(data);
});
