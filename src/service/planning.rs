//! The steps around a plan that a face takes besides `Service::plan`: rendering it for a
//! provider, the warm-up of its first search, a query's vectors, the usage it is counted under
//! and picks, and which calls run under a plan.

use super::{Plan, PlanScope, Registered, Registry, Service};
use crate::embed::QueryVector;
use crate::exposition::render::{Marking, RenderError, Rendered, Rendering, SearchBy};
use crate::exposition::sessions::Promote;
use std::sync::Arc;

impl Service {
    /// `plan` as `rendering` sends it (`exposition::render`): `None` for the portable form.
    pub fn render(&self, plan: &mut Plan, active: &[Arc<Registered>], rendering: Rendering, search: SearchBy, strict: bool, marking: Option<&Marking>) -> Result<Option<Rendered>, RenderError> {
        crate::exposition::render::render(plan, active, rendering, search, strict, marking)
    }

    /// The work that readies a plan's first search, for the face to run after its reply, off
    /// its request path: the deferred pool's search index, and vectors for the pool (known ones
    /// are skipped at once).
    pub fn plan_warmup(&self, scope: Arc<PlanScope>, registry: Arc<Registry>) -> impl FnOnce() + Send + 'static {
        let semantic = self.semantic().cloned();
        move || {
            crate::meta::plan_index(&scope, &registry);
            if let Some(semantic) = semantic {
                let pool: Vec<_> = scope.deferred.iter().filter_map(|n| registry.get(n)).collect();
                semantic.want(crate::meta::embedding_texts(pool));
            }
        }
    }

    /// A plan query's embeddings, one per model of the semantic signal (`None` without one).
    pub async fn query_vectors(&self, text: &str) -> Option<Vec<Result<QueryVector, String>>> {
        Some(crate::meta::search::query_vectors(self.semantic()?, text).await)
    }

    /// The usage key of a request that names none: its scope's.
    pub fn usage_key(scope: &serde_json::Value) -> String {
        crate::usage::key_for_scope(scope)
    }

    /// The usage-driven tools `plan` placed inline, for a session to keep.
    pub fn usage_picks(plan: &Plan) -> Vec<Promote> {
        crate::exposition::sessions::chosen(plan)
    }

    /// Whether a call of `name` runs under a plan: a meta-tool, or `tool_exec`.
    pub fn plan_scoped(name: &str) -> bool {
        crate::meta::is_meta(name) || name == crate::exposition::meta_defs::EXEC
    }

    /// Starts loading the tokenizer (~150 ms), off the request path; once per process.
    pub fn preload_tokenizer() {
        crate::tokenize::preload();
    }
}
