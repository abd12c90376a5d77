// MCP elicitation and sampling through the host, against the REAL binary and the project's
// fixture MCP server (`--elicit`: its tools ask the client mid-call and return what they got).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ElicitParams, RootsParams, SampleParams } from '../src/index.js';
import { fixtureServers, spawnReal } from './helpers.js';

/** The fixture's tool result: what its elicitation/sampling request got back, as JSON. */
const answerOf = (r: { output: { type: string; value?: unknown } }) => JSON.parse(String(r.output.value));

describe('elicitation and sampling (real binary)', () => {
  it('onElicit answers a form question with its call named; defaults fill the rest; onSample answers sampling', async () => {
    const elicits: ElicitParams[] = [];
    const samples: SampleParams[] = [];
    const { client, transcript } = await spawnReal({
      onElicit: (p) => (elicits.push(p), { action: 'accept', content: { nick: 'ts' } }),
      onSample: (p) => (samples.push(p), { role: 'assistant', content: { type: 'text', text: 'pong' }, model: 'test-model' }),
    });
    try {
      const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
      assert.equal(init.msg.params.capabilities.elicitation, true);
      assert.equal(init.msg.params.capabilities.sampling, true);
      await client.catalogSetServers(fixtureServers(['--elicit']));
      assert.equal((await client.catalogRefresh({ serverId: 'fx' })).state, 'ready');
      const names = (await client.registrySyncMcp({})).registered;
      const wire = (t: string) => names.find((n) => n.endsWith(`__${t}`))!;

      const asked = await client.toolInvoke({ name: wire('ask'), arguments: {}, callId: 'ts-1' });
      assert.equal(elicits.length, 1);
      assert.equal(elicits[0]!.callId, 'ts-1');
      assert.equal(elicits[0]!.tool, 'ask');
      assert.equal(elicits[0]!.mode, 'form');
      assert.deepEqual(answerOf(asked), {
        action: 'accept',
        content: { nick: 'ts', name: 'Ada', age: 36, score: 9.5, color: 'blue', subscribe: true },
      });

      const sampled = await client.toolInvoke({ name: wire('sample'), arguments: { prompt: 'ping' }, callId: 'ts-2' });
      assert.equal(samples.length, 1);
      assert.equal(samples[0]!.callId, 'ts-2');
      assert.equal((samples[0]!.request as any).messages[0].content.text, 'ping');
      const got = answerOf(sampled);
      assert.equal(got.model, 'test-model');
      assert.deepEqual(got.content, { type: 'text', text: 'pong' });
    } finally {
      assert.equal((await client.close()).code, 0);
    }
  });

  it('a question the sidecar withdraws aborts onElicit and the server hears cancel', async () => {
    let aborted = false;
    const { client } = await spawnReal({
      timeouts: { elicitationMs: 300 },
      onElicit: (_p, signal) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('withdrawn'));
          }),
        ),
    });
    try {
      await client.catalogSetServers(fixtureServers(['--elicit']));
      assert.equal((await client.catalogRefresh({ serverId: 'fx' })).state, 'ready');
      const names = (await client.registrySyncMcp({})).registered;
      const r = await client.toolInvoke({ name: names.find((n) => n.endsWith('__ask'))!, arguments: {}, callId: 'ts-3' });
      assert.deepEqual(answerOf(r), { action: 'cancel' });
      assert.equal(aborted, true);
    } finally {
      await client.close();
    }
  });

  it('onRoots answers a 2026-07-28 server that needs the roots, with its call named', async () => {
    const asked: RootsParams[] = [];
    const { client, transcript } = await spawnReal({
      onRoots: (p) => (asked.push(p), { roots: [{ uri: 'file:///ts', name: 'ts' }] }),
    });
    try {
      const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
      assert.equal(init.msg.params.capabilities.roots, true);
      await client.catalogSetServers(fixtureServers(['--modern']));
      assert.equal((await client.catalogRefresh({ serverId: 'fx' })).state, 'ready');
      const names = (await client.registrySyncMcp({})).registered;
      const tool = 'test_input_required_result_list_roots';
      // Registered under the registry's rendering of the name.
      const r = await client.toolInvoke({ name: names.find((n) => n.endsWith('__testInputRequiredResultListRoots'))!, arguments: {}, callId: 'ts-r' });
      assert.equal(r.output.value, 'Roots: file:///ts');
      assert.deepEqual(asked, [{ serverId: 'fx', callId: 'ts-r', tool }]);
    } finally {
      assert.equal((await client.close()).code, 0);
    }
  });
});
