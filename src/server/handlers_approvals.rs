//! Handlers of the approval methods: the host's answer to a question (`approval/respond`) and
//! the approvals the user asked to remember (`approval/grants`, `approval/revoke`).

use super::Ctx;
use crate::protocol::*;
use crate::service::Decision;
use serde_json::json;

pub fn handle_approval_respond(ctx: &Ctx, p: ApprovalRespondParams) -> Result<Empty, RpcError> {
    let decision = match p.decision {
        ApprovalDecision::Approve => Decision::Approve { remember: p.remember.unwrap_or_default() },
        ApprovalDecision::Deny => Decision::Deny { reason: p.reason },
    };
    if ctx.service.approvals.respond(&p.approval_id, decision) {
        Ok(Empty {})
    } else {
        Err(RpcError::new(ErrorCode::UNKNOWN_APPROVAL, format!("no call waits for approval {:?} (unknown, answered, timed out or cancelled)", p.approval_id))
            .with_data(json!({"approvalId": p.approval_id})))
    }
}

/// `Serial`: reads the cacheDir's store (on the blocking pool).
pub fn handle_grants(ctx: &Ctx, _p: NoParams) -> Result<GrantsResult, RpcError> {
    Ok(GrantsResult { grants: ctx.service.grants.list() })
}

/// `Serial`: deletes the lasting grants from the cacheDir's store (on the blocking pool).
pub fn handle_revoke(ctx: &Ctx, p: RevokeParams) -> Result<RevokeResult, RpcError> {
    let all = p.all.unwrap_or(false);
    if p.tool.is_none() && !all {
        return Err(RpcError::new(ErrorCode::INVALID_PARAMS, "approval/revoke needs a tool, or all: true"));
    }
    Ok(RevokeResult { revoked: ctx.service.grants.revoke(p.tool.as_deref(), all) as u64 })
}
