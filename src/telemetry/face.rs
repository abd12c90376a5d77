//! The process's telemetry as a face reaches it: the one installed, installing it, and a
//! request's span (associated to the types the service re-exports, so no face names this module).

use super::{Request, Telemetry};
use std::future::Future;

impl Telemetry {
    /// The process's telemetry: off until one is installed.
    pub fn global() -> &'static Telemetry {
        super::global()
    }

    /// Makes this the process's telemetry; `false` if one was installed already (kept).
    pub fn install(self) -> bool {
        super::install(self)
    }
}

impl Request {
    /// `fut`, the request `req` describes, in a span (`telemetry::request`).
    pub fn traced<F, J>(req: Option<Request>, fut: F, judge: J) -> futures::future::Either<F, impl Future<Output = F::Output>>
    where
        F: Future,
        J: FnOnce(&F::Output) -> Option<String>,
    {
        super::request(req, fut, judge)
    }
}
