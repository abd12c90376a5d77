import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROTOCOL_VERSION, ToolregClient, ToolregExitedError, ToolregRpcError, type ExitInfo } from '../src/index.js';
import { BIN, entry, sleep, spawnReal, waitUntil } from './helpers.js';

describe('lifecycle', () => {
  it('spawns, initializes, declares capabilities from the callbacks, and closes with exit code 0', async () => {
    const exits: ExitInfo[] = [];
    const { client, transcript } = await spawnReal({
      onApprovalRequest: () => 'approve',
      onExit: (i) => exits.push(i),
      clientInfo: { name: 'ts-test', version: '1' },
    });
    const init = client.initializeResult;
    assert.equal(init.serverInfo.name, 'toolreg');
    assert.equal(init.protocolVersion, PROTOCOL_VERSION);
    assert.ok(init.capabilities.methods.includes('registry/register'));
    assert.ok(init.capabilities.maxFrameBytes > 0);
    const info = await client.close();
    assert.equal(info.code, 0);
    assert.equal(info.expected, true);
    assert.equal(client.isExited, true);
    await sleep(50);
    assert.equal(exits.length, 1);
    const t = transcript();
    const initMsg = t.find((r) => r.msg.method === 'initialize')!;
    assert.deepEqual(initMsg.msg.params.capabilities, {
      approval: true,
      hostTools: false,
      repair: false,
      elicitation: false,
      sampling: false,
      roots: false,
      openUrl: false,
      secrets: false,
    });
    assert.deepEqual(initMsg.msg.params.clientInfo, { name: 'ts-test', version: '1' });
    const methods = t.filter((r) => r.dir === 'in').map((r) => r.msg.method);
    assert.deepEqual(methods, ['initialize', 'initialized', 'shutdown', 'exit']);
    // After exit every call rejects at once.
    await assert.rejects(client.registryList(), ToolregExitedError);
    assert.deepEqual(await client.close(), info);
  });

  it('rejects spawn of a missing binary with ToolregExitedError', async () => {
    await assert.rejects(ToolregClient.spawn({ binaryPath: '/nonexistent/toolreg' }), (e: unknown) => e instanceof ToolregExitedError && /could not start.*ENOENT/.test(e.message));
  });

  it('rejects spawn when the process exits before answering initialize', async () => {
    const exits: ExitInfo[] = [];
    await assert.rejects(
      ToolregClient.spawn({ binaryPath: BIN, args: ['no-such-subcommand'], onExit: (i) => exits.push(i) }),
      (e: unknown) => e instanceof ToolregExitedError && e.exitCode !== 0 && e.method === 'initialize',
    );
    await waitUntil(() => exits.length === 1);
  });
});

describe('registry and exposition (real binary)', () => {
  it('register, list, selectActive, deregister', async () => {
    const { client } = await spawnReal();
    try {
      const reg = await client.registryRegister({
        entries: [entry('notes_create', { applies: { flag: 'notesEnabled' } }), entry('notes_delete', { approval: true })],
      });
      assert.deepEqual(reg.registered, ['notes_create', 'notes_delete']);

      const list = await client.registryList({ namespace: 'notes' });
      assert.deepEqual(list.entries.map((e) => e.name), ['notes_create', 'notes_delete']);
      assert.equal(list.entries[0]!.summary, 'Tool notes_create: does something with notes.');
      assert.deepEqual(list.entries[0]!.source, { kind: 'host' });
      assert.equal(list.entries[1]!.approval, true);

      const all = await client.registryList();
      assert.ok(all.entries.some((e) => e.name === 'web_search' && e.source.kind === 'builtin'));
      const q = await client.registryList({ query: 'NOTES_DEL' });
      assert.deepEqual(q.entries.map((e) => e.name), ['notes_delete']);
      assert.deepEqual((await client.registryList({ namespace: 'none' })).entries, []);

      const off = await client.registrySelectActive({ scope: { settings: { notesEnabled: false } } });
      assert.ok(!off.entries.some((e) => e.name === 'notes_create'));
      const on = await client.registrySelectActive({
        scope: { settings: { notesEnabled: true, enableWebSearch: true }, knowledgeBaseIds: ['kb1'] },
      });
      const names = on.entries.map((e) => e.name);
      for (const n of ['notes_create', 'notes_delete', 'web_search', 'web_fetch', 'kb_search', 'kb_list']) assert.ok(names.includes(n), n);
      const missing = await client.registrySelectActive({ scope: {} });
      assert.ok(missing.warnings.some((w) => w.name === 'notes_create'));

      const dereg = await client.registryDeregister({ names: ['notes_create', 'never_existed'] });
      assert.deepEqual(dereg.removed, ['notes_create']);
      assert.deepEqual((await client.registryList({ namespace: 'notes' })).entries.map((e) => e.name), ['notes_delete']);
    } finally {
      await client.close();
    }
  });

  it('register refuses a bad entry with -32013 and data.name', async () => {
    const { client } = await spawnReal();
    try {
      await assert.rejects(client.registryRegister({ entries: [entry('ok_one'), entry('bad name')] }), (e: unknown) => {
        assert.ok(e instanceof ToolregRpcError);
        assert.equal(e.code, -32013);
        assert.deepEqual(e.data, { name: 'bad name' });
        return true;
      });
      assert.deepEqual((await client.registryList({ namespace: 'notes' })).entries, []); // all or nothing
    } finally {
      await client.close();
    }
  });

  it('exposition/plan defers a large auto pool and keeps approval tools inline', async () => {
    const { client } = await spawnReal();
    try {
      const big = (i: number) =>
        entry(`big_tool_${i}`, {
          namespace: 'bulk',
          description: `Bulk tool ${i}. ` + 'It does a great many things with many options. '.repeat(30),
        });
      await client.registryRegister({ entries: [...Array.from({ length: 8 }, (_, i) => big(i)), entry('notes_delete', { approval: true })] });
      const plan = await client.expositionPlan({
        scope: {},
        contextWindow: 8000,
        model: 'gpt-4o',
        clientTools: [{ name: 'my_tool', description: 'Mine.', inputSchema: { type: 'object' } }],
        include: ['deferred'],
      });
      assert.equal(typeof plan.planId, 'string');
      assert.equal(plan.decision.deferred, true);
      assert.equal(plan.decision.gate, 'passed');
      assert.equal(plan.encoding.name, 'o200k_base');
      assert.equal(plan.encoding.exact, true);
      const names = plan.tools.map((t) => t.name);
      assert.equal(names[0], 'my_tool');
      assert.ok(names.includes('notes_delete'));
      assert.deepEqual(names.slice(-4), ['tool_search', 'tool_inspect', 'tool_invoke', 'tool_result_read']);
      assert.equal(plan.placements['notes_delete']!.reason, 'approval');
      assert.equal(plan.placements['my_tool']!.reason, 'client');
      assert.equal(plan.placements['big_tool_0']!.deferred, true);
      assert.equal(plan.deferred?.length, 8);
      assert.match(plan.systemPrompt ?? '', /DEFERRED_TOOLS/);
      assert.ok(plan.tokens.inline > 0 && plan.tokens.deferred > 0);
      // Lean by default: no deferred list, no deferred placements, no per-tool counts.
      const lean = await client.expositionPlan({ scope: {}, contextWindow: 8000, model: 'gpt-4o' });
      assert.equal(lean.deferred, undefined);
      assert.equal(lean.tokens.perTool, undefined);
      assert.equal(lean.placements['big_tool_0'], undefined);
      assert.match(lean.planHash, /^[0-9a-f]{32}$/);
      const same = await client.expositionPlan({ scope: {}, contextWindow: 8000, model: 'gpt-4o', ifNoneMatch: lean.planHash });
      assert.deepEqual(Object.keys(same).sort(), ['planHash', 'planId', 'unchanged']);
    } finally {
      await client.close();
    }
  });
});

describe('errors', () => {
  it('unknown method is -32601 with data.method; every SPEC 8 method not built yet surfaces the same way', async () => {
    const { client } = await spawnReal();
    try {
      await assert.rejects(client.request('no/such', {}), (e: unknown) => e instanceof ToolregRpcError && e.code === -32601 && (e.data as any).method === 'no/such');
      const answered = new Set(client.initializeResult.capabilities.methods);
      const calls: [string, () => Promise<unknown>][] = [
        ['registry/resolveMcpToolIds', () => client.registryResolveMcpToolIds({ assistant: {} })],
        ['registry/syncMcp', () => client.registrySyncMcp({})],
        ['tool/invoke', () => client.toolInvoke({ name: 'x', arguments: {} })],
        ['catalog/setServers', () => client.catalogSetServers({ servers: [] })],
        ['catalog/listTools', () => client.catalogListTools({ serverId: 's' })],
        ['catalog/refresh', () => client.catalogRefresh({ serverId: 's' })],
        ['catalog/restart', () => client.catalogRestart({ serverId: 's' })],
        ['catalog/status', () => client.catalogStatus()],
        ['approval/respond', () => client.approvalRespond({ approvalId: 'a', decision: 'deny' })],
      ];
      for (const [method, call] of calls) {
        if (answered.has(method)) {
          // Built since these tests were written: only check it does not break the connection.
          await call().catch((e) => assert.ok(e instanceof ToolregRpcError, `${method}: ${e}`));
          continue;
        }
        await assert.rejects(call(), (e: unknown) => e instanceof ToolregRpcError && e.code === -32601 && e.method === method, method);
      }
      assert.ok(Array.isArray((await client.registryList()).entries)); // still usable
    } finally {
      await client.close();
    }
  });

  it('bad params are -32602 with line/column', async () => {
    const { client } = await spawnReal();
    try {
      await assert.rejects(client.registryRegister({ entries: 5 } as any), (e: unknown) => {
        assert.ok(e instanceof ToolregRpcError);
        assert.equal(e.code, -32602);
        assert.equal(typeof (e.data as any).line, 'number');
        assert.equal(typeof (e.data as any).column, 'number');
        return true;
      });
      await assert.rejects(client.registryDeregister({} as any), (e: unknown) => e instanceof ToolregRpcError && e.code === -32602);
    } finally {
      await client.close();
    }
  });

  it('malformed arguments are refused in the client without breaking the connection', async () => {
    const { client, transcript } = await spawnReal();
    try {
      await assert.rejects(client.request('registry/list', 42 as any), TypeError);
      await assert.rejects(client.request('registry/list', [1, 2] as any), TypeError);
      const cyclic: any = { namespace: 'x' };
      cyclic.self = cyclic;
      await assert.rejects(client.registryList(cyclic), TypeError);
      await assert.rejects(client.registryList({ namespace: 10n as any }), TypeError);
      assert.deepEqual((await client.registryList({ namespace: 'none' })).entries, []);
    } finally {
      await client.close();
    }
    assert.equal(transcript().filter((r) => r.msg.method === 'registry/list').length, 1);
  });

  it('a handler panic is -32603 and the sidecar keeps running', async () => {
    const { client } = await spawnReal();
    try {
      await assert.rejects(client.request('debug/panic', {}), (e: unknown) => e instanceof ToolregRpcError && e.code === -32603);
      assert.ok((await client.registryList()).entries.length > 0);
    } finally {
      await client.close();
    }
  });
});

describe('cancellation', () => {
  it('AbortSignal rejects at once and sends $/cancelRequest; the sidecar answers -32800', async () => {
    const { client, transcript } = await spawnReal();
    try {
      const ac = new AbortController();
      const t0 = Date.now();
      const p = client.request('debug/sleep', { ms: 5000 }, { signal: ac.signal });
      setTimeout(() => ac.abort(), 100);
      await assert.rejects(p, (e: unknown) => (e as Error).name === 'AbortError');
      assert.ok(Date.now() - t0 < 2000);
      // a reason given to abort() is what the promise rejects with
      const ac2 = new AbortController();
      const p2 = client.request('debug/sleep', { ms: 5000 }, { signal: ac2.signal });
      const reason = new Error('user pressed stop');
      setTimeout(() => ac2.abort(reason), 50);
      await assert.rejects(p2, (e: unknown) => e === reason);
      // still usable
      assert.ok(Array.isArray((await client.registryList({ namespace: 'none' })).entries));
      await waitUntil(() => transcript().filter((r) => r.dir === 'out' && r.msg.error?.code === -32800).length === 2);
      const t = transcript();
      const sleeps = t.filter((r) => r.msg.method === 'debug/sleep').map((r) => r.msg.id);
      const cancels = t.filter((r) => r.msg.method === '$/cancelRequest').map((r) => r.msg.params.id);
      assert.deepEqual(cancels, sleeps);
    } finally {
      await client.close();
    }
  });

  it('an already aborted signal rejects without sending anything', async () => {
    const { client, transcript } = await spawnReal();
    try {
      await assert.rejects(client.registryList({}, { signal: AbortSignal.abort() }), (e: unknown) => (e as Error).name === 'AbortError');
    } finally {
      await client.close();
    }
    assert.equal(transcript().filter((r) => r.msg.method === 'registry/list').length, 0);
  });

  it('signal on a typed method (exposition/plan) cancels it', async () => {
    const { client } = await spawnReal();
    try {
      const ac = new AbortController();
      const p = client.expositionPlan({ scope: {} }, { signal: ac.signal });
      ac.abort();
      await assert.rejects(p, (e: unknown) => (e as Error).name === 'AbortError');
    } finally {
      await client.close();
    }
  });
});

describe('crash', () => {
  it('SIGKILL during a call rejects every pending call with ToolregExitedError; onExit fires once', async () => {
    const exits: ExitInfo[] = [];
    const { client } = await spawnReal({ onExit: (i) => exits.push(i), log: { level: 'debug' } });
    const p1 = client.request('debug/sleep', { ms: 5000 });
    const p2 = client.request('debug/sleep', { ms: 5000 });
    await sleep(100);
    client.process.kill('SIGKILL');
    for (const p of [p1, p2]) {
      await assert.rejects(p, (e: unknown) => {
        assert.ok(e instanceof ToolregExitedError);
        assert.equal(e.signal, 'SIGKILL');
        assert.equal(e.exitCode, null);
        assert.equal(e.method, 'debug/sleep');
        assert.match(e.message, /SIGKILL/);
        assert.ok(e.stderr.length > 0, 'stderr tail');
        return true;
      });
    }
    await sleep(100);
    assert.equal(exits.length, 1);
    assert.equal(exits[0]!.expected, false);
    await assert.rejects(client.registryList(), ToolregExitedError);
    assert.equal((await client.close()).signal, 'SIGKILL');
    assert.equal(exits.length, 1);
  });
});

describe('generated protocol', () => {
  it('every request in protocol/*.schema.json has a typed method on the client', async () => {
    const { SCHEMA_METHODS } = await import('../src/index.js');
    const camel = (m: string) =>
      m
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1)))
        .join('');
    for (const [method, m] of Object.entries(SCHEMA_METHODS) as [string, { kind: string; direction: string }][]) {
      if (m.kind !== 'request' || m.direction !== 'hostToSidecar' || method === 'initialize') continue;
      assert.equal(typeof (ToolregClient.prototype as any)[camel(method)], 'function', `ToolregClient.${camel(method)} for ${method}`);
    }
  });

  it('every sidecar-to-host method in protocol/*.schema.json has a handler in the client', async () => {
    const { SCHEMA_METHODS } = await import('../src/index.js');
    const fs = await import('node:fs');
    const src = fs.readFileSync(new URL('../../src/index.ts', import.meta.url), 'utf8');
    for (const [method, m] of Object.entries(SCHEMA_METHODS) as [string, { kind: string; direction: string }][]) {
      if (m.direction !== 'sidecarToHost') continue;
      const on = m.kind === 'request' ? 'onRequest' : 'onNotification';
      assert.ok(src.includes(`connection.${on}('${method}'`), `src/index.ts has no connection.${on}('${method}', ...)`);
    }
  });
});

describe('volume and concurrency', () => {
  it('large frames, and concurrent calls answered out of order', async () => {
    const { client } = await spawnReal();
    try {
      const entries = Array.from({ length: 2000 }, (_, i) =>
        entry(`bulk_${String(i).padStart(4, '0')}`, { namespace: 'bulk', description: `Bulk tool ${i}. ` + 'x'.repeat(500) }),
      );
      assert.equal((await client.registryRegister({ entries })).registered.length, 2000);
      const listed = await client.registryList({ namespace: 'bulk' });
      assert.deepEqual(listed.entries.map((e) => e.name), entries.map((e) => e.name));
      let slowDone = 0;
      // Long enough that the 100 lists answer first on any machine: the check is order, not speed.
      const slow = Array.from({ length: 3 }, () => client.request('debug/sleep', { ms: 5000 }).then((r) => (slowDone++, r)));
      const queries = Array.from({ length: 100 }, (_, i) => `bulk_${String(i * 20).padStart(4, '0')}`);
      const results = await Promise.all(queries.map((query) => client.registryList({ query })));
      assert.equal(slowDone, 0);
      results.forEach((r, i) => assert.deepEqual(r.entries.map((e) => e.name), [queries[i]]));
      assert.deepEqual(await Promise.all(slow), [null, null, null]);
    } finally {
      await client.close();
    }
  });
});
