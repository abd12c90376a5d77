//! Arbitrary bytes through the path every host message takes before a handler runs: frames out
//! of the codec, each body classified by the server's own `server::message::classify`
//! (JSON, one object, `"jsonrpc": "2.0"`, an integer or string id; then request, notification or
//! response), and a request's params parsed into its method's protocol type as the method table
//! does (`dispatch::parse`: absent or null means `{}`, a list is refused).
//!
//! Checks: nothing panics, and a request's id echoes back exactly as it was sent.
#![no_main]

use bytes::{Bytes, BytesMut};
use libfuzzer_sys::fuzz_target;
use serde_json::value::RawValue;
use std::collections::HashMap;
use tokio_util::codec::Decoder;
use toolreg::protocol::{self as p, Request};
use toolreg::server::dispatch;
use toolreg::server::message::{self, Incoming};
use toolreg::transport::codec::{ContentLengthCodec, Frame};

fn params<R: Request>(params: Option<&[u8]>) {
    // The method table's own parser: absent means `{}`, a list is refused, never a panic.
    let _ = dispatch::parse::<R::Params>(params);
}

fn request(method: &str, p: Option<&[u8]>) {
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

/// The server's own classifier (`server::message::classify`); a request's id must echo back
/// exactly as it came, and its params go through the method table's parser.
fn classify(body: &Bytes) {
    match message::classify(body) {
        Incoming::Request { id, method, params } => {
            let echoed = message::failure(Some(&id), &toolreg::protocol::RpcError::new(toolreg::protocol::ErrorCode::INTERNAL_ERROR, "x"));
            // Compared as text: an id may be an integer no f64 holds (500 digits), which a
            // `Value` cannot parse, and the server echoes it byte for byte.
            let v: HashMap<String, Box<RawValue>> = serde_json::from_slice(&echoed).expect("an error body is JSON");
            assert_eq!(v["id"].get().as_bytes(), id.raw(), "the id is echoed as sent");
            request(&method, params.as_deref());
        }
        Incoming::Notification { .. } | Incoming::Response { .. } | Incoming::Invalid { .. } => {}
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
    classify(&Bytes::copy_from_slice(data));
});
