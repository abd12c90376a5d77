// tool/invoke and the reverse traffic it causes, against the REAL binary: host tools
// (host/executeTool), approval (approval/request -> approval/respond), repair
// (host/repairToolCall) and the meta-tools. Skipped when the binary does not answer tool/invoke.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { ApprovalRequest, ExecuteToolParams, RepairToolCallParams, SpawnOptions } from '../src/index.js';
import { entry, spawnReal } from './helpers.js';

async function spawnInvoking(_t: TestContext, opts: SpawnOptions) {
  const s = await spawnReal(opts);
  assert.ok(s.client.initializeResult.capabilities.methods.includes('tool/invoke'), 'the sidecar must answer tool/invoke');
  return s;
}

const text = (o: { type: string; value?: unknown }) => (o.type === 'text' || o.type === 'error-text' ? String(o.value) : JSON.stringify(o.value));

describe('tool/invoke with reverse traffic (real binary)', () => {
  it('a host tool runs through host/executeTool with the callId', async (t) => {
    const calls: ExecuteToolParams[] = [];
    const s = await spawnInvoking(t, {
      onExecuteTool: async (p) => {
        calls.push(p);
        return { content: [{ type: 'text', text: `note ${(p.arguments as any).title} created` }] };
      },
    });
    if (!s) return;
    const { client, transcript } = s;
    try {
      await client.registryRegister({ entries: [entry('notes_create', { defer: 'never' })] });
      const r = await client.toolInvoke({ name: 'notes_create', arguments: { title: 'Hi' }, callId: 'call-1' });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.match(text(r.output), /note Hi created/);
      assert.deepEqual(calls, [{ name: 'notes_create', arguments: { title: 'Hi' }, callId: 'call-1' }]);
      const out = transcript().filter((x) => x.dir === 'out' && x.msg.method === 'host/executeTool');
      assert.equal(out.length, 1);
    } finally {
      await client.close();
    }
  });

  it('a host tool that throws is an error result the model can read', async (t) => {
    const s = await spawnInvoking(t, {
      onExecuteTool: async () => {
        throw new Error('disk full');
      },
    });
    if (!s) return;
    const { client } = s;
    try {
      await client.registryRegister({ entries: [entry('notes_create', { defer: 'never' })] });
      const r = await client.toolInvoke({ name: 'notes_create', arguments: { title: 'Hi' }, callId: 'call-2' });
      assert.equal(r.isError, true);
      assert.match(text(r.output), /disk full/);
    } finally {
      await client.close();
    }
  });

  it('an approval-gated tool asks the host (approval/request -> approval/respond) before it runs', async (t) => {
    const asked: ApprovalRequest[] = [];
    let ran = 0;
    const s = await spawnInvoking(t, {
      onApprovalRequest: async (req) => {
        asked.push(req);
        return (req.arguments as any).title === 'ok' ? 'approve' : { decision: 'deny', reason: 'user said no' };
      },
      onExecuteTool: async () => (ran++, { content: [{ type: 'text', text: 'deleted' }] }),
    });
    if (!s) return;
    const { client, transcript } = s;
    try {
      await client.registryRegister({ entries: [entry('notes_delete', { approval: true })] });
      const ok = await client.toolInvoke({ name: 'notes_delete', arguments: { title: 'ok' }, callId: 'call-3' });
      assert.equal(ok.isError, false, JSON.stringify(ok));
      assert.equal(ran, 1);
      const no = await client.toolInvoke({ name: 'notes_delete', arguments: { title: 'keep' }, callId: 'call-4' });
      assert.equal(no.isError, true);
      assert.equal(ran, 1, 'a denied call does not run');
      assert.deepEqual(asked.map((a) => [a.name, a.callId]), [['notes_delete', 'call-3'], ['notes_delete', 'call-4']]);
      const responds = transcript().filter((x) => x.dir === 'in' && x.msg.method === 'approval/respond').map((x) => x.msg.params);
      assert.deepEqual(responds, [
        { approvalId: asked[0]!.approvalId, decision: 'approve' },
        { approvalId: asked[1]!.approvalId, decision: 'deny', reason: 'user said no' },
      ]);
    } finally {
      await client.close();
    }
  });

  it('an approval remembered for the session runs the next call unasked, until revoked', async (t) => {
    let asked = 0;
    let ran = 0;
    const s = await spawnInvoking(t, {
      onApprovalRequest: async () => (asked++, { decision: 'approve', remember: 'session' }),
      onExecuteTool: async () => (ran++, { content: [{ type: 'text', text: 'deleted' }] }),
    });
    if (!s) return;
    const { client } = s;
    try {
      await client.registryRegister({ entries: [entry('notes_delete', { approval: true })] });
      const first = await client.toolInvoke({ name: 'notes_delete', arguments: { title: 'a' } });
      assert.equal(first.approvedBy, 'host');
      const second = await client.toolInvoke({ name: 'notes_delete', arguments: { title: 'b' } });
      assert.equal(second.approvedBy, 'grant');
      assert.deepEqual([asked, ran], [1, 2]);
      const { grants } = await client.approvalGrants();
      assert.deepEqual(grants.map((g) => [g.tool, g.lasts]), [['notes_delete', 'session']]);
      assert.deepEqual(await client.approvalRevoke({ tool: 'notes_delete' }), { revoked: 1 });
      await client.toolInvoke({ name: 'notes_delete', arguments: { title: 'c' } });
      assert.equal(asked, 2, 'asked again after the revocation');
    } finally {
      await client.close();
    }
  });

  it('invalid arguments go to host/repairToolCall when the host offers repair', async (t) => {
    const repairs: RepairToolCallParams[] = [];
    const ran: unknown[] = [];
    const s = await spawnInvoking(t, {
      onRepairToolCall: async (p) => (repairs.push(p), { arguments: { title: 'repaired' } }),
      onExecuteTool: async (p) => (ran.push(p.arguments), { content: [{ type: 'text', text: 'ok' }] }),
    });
    if (!s) return;
    const { client } = s;
    try {
      await client.registryRegister({ entries: [entry('notes_create', { defer: 'never' })] });
      const r = await client.toolInvoke({ name: 'notes_create', arguments: { wrong: [1, 2] }, callId: 'call-5' });
      assert.equal(repairs.length, 1);
      assert.equal(repairs[0]!.name, 'notes_create');
      assert.deepEqual(repairs[0]!.arguments, { wrong: [1, 2] });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.deepEqual(ran, [{ title: 'repaired' }]);
    } finally {
      await client.close();
    }
  });

  it('meta-tools run inside the sidecar with the planId', async (t) => {
    const s = await spawnInvoking(t, { onExecuteTool: async () => ({ content: [{ type: 'text', text: 'crm ran' }] }) });
    if (!s) return;
    const { client } = s;
    try {
      const bulk = Array.from({ length: 8 }, (_, i) =>
        entry(`crm_tool_${i}`, { namespace: 'crm', description: `CRM operation ${i} on customer records. ` + 'Many options. '.repeat(60) }),
      );
      await client.registryRegister({ entries: bulk });
      const plan = await client.expositionPlan({ scope: {}, contextWindow: 8000 });
      assert.equal(plan.decision.deferred, true);
      const search = await client.toolInvoke({ name: 'tool_search', arguments: { query: 'customer' }, planId: plan.planId, callId: 'm1' });
      assert.equal(search.isError, false, JSON.stringify(search));
      assert.match(text(search.output), /crm_tool_/);
    } finally {
      await client.close();
    }
  });
});

describe('approval that becomes moot (real binary)', () => {
  it('the signal given to onApprovalRequest aborts when the sidecar times the approval out; no approval/respond is sent', async (t) => {
    let aborted = false;
    let asked = 0;
    const s = await spawnInvoking(t, {
      timeouts: { approvalMs: 300 },
      onApprovalRequest: (_req, signal) =>
        new Promise((resolve) => {
          asked++;
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve('approve'); // too late: must not be sent
          });
        }),
      onExecuteTool: async () => ({ content: [{ type: 'text', text: 'ran' }] }),
    });
    if (!s) return;
    const { client, transcript } = s;
    try {
      await client.registryRegister({ entries: [entry('notes_delete', { approval: true })] });
      const r = await client.toolInvoke({ name: 'notes_delete', arguments: { title: 'x' }, callId: 'slow-user' });
      assert.equal(r.isError, true, JSON.stringify(r));
      assert.equal(asked, 1);
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(aborted, true);
      assert.equal(transcript().filter((x) => x.msg.method === 'approval/respond').length, 0);
    } finally {
      await client.close();
    }
  });

  it('aborting the toolInvoke aborts its approval dialog', async (t) => {
    let aborted = false;
    const s = await spawnInvoking(t, {
      onApprovalRequest: (_req, signal) =>
        new Promise((resolve) => signal.addEventListener('abort', () => ((aborted = true), resolve('deny')))),
      onExecuteTool: async () => ({ content: [] }),
    });
    if (!s) return;
    const { client, transcript } = s;
    try {
      await client.registryRegister({ entries: [entry('notes_delete', { approval: true })] });
      const ac = new AbortController();
      const p = client.toolInvoke({ name: 'notes_delete', arguments: { title: 'x' }, callId: 'c-abort' }, { signal: ac.signal });
      await new Promise((r) => setTimeout(r, 150));
      ac.abort();
      await assert.rejects(p, (e: unknown) => (e as Error).name === 'AbortError');
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(aborted, true);
      assert.equal(transcript().filter((x) => x.msg.method === 'approval/respond').length, 0);
      assert.equal(transcript().filter((x) => x.msg.method === '$/cancelRequest').length, 1);
    } finally {
      await client.close();
    }
  });
});
