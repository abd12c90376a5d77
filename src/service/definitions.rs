//! `exposition/definitions`: a plan's deferred definitions, for a host whose own loop defers
//! tools (the AI SDK's `toolSearch`).

use super::Service;
use crate::exposition::definitions::{definitions, Definitions};
use crate::invoke::InvokeError;
use crate::registry::Registry;

impl Service {
    /// The deferred tools of the plan `plan_id` (all, or those in `names`), with their schemas
    /// when `schemas`; a plan that is gone is `UnknownPlan`, as for a meta-tool.
    pub fn plan_definitions(&self, registry: &Registry, plan_id: &str, names: Option<&[String]>, schemas: bool) -> Result<Definitions, InvokeError> {
        let plan = self.plans.get(plan_id).ok_or_else(|| InvokeError::UnknownPlan(plan_id.to_string()))?;
        Ok(definitions(&plan, registry, names, schemas))
    }
}
