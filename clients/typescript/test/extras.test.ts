// Resources, resource templates, prompts and completions through the sidecar, against the real
// binary and the reference server-everything (its resources, templates, prompts and completers).
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ToolregRpcError, type ResourceUpdatedParams, type ToolregClient } from '../src/index.js';
import { REFERENCE_SERVERS, everythingServers, sleep, spawnReal, waitUntil } from './helpers.js';

/** Lists answer from the cache: waits until server-everything's list is known (not pending). */
async function listedResources(client: ToolregClient) {
  const end = Date.now() + 30000;
  for (;;) {
    const listed = await client.catalogListResources({ serverId: 'everything' });
    if (!listed.pending?.length && listed.resources.length > 0) return listed;
    if (Date.now() > end) throw new Error(`resources still pending: ${JSON.stringify(listed)}`);
    await sleep(50);
  }
}

describe('resources, prompts, completions (server-everything)', () => {
  it('lists and reads resources and templates, gets prompts, completes arguments', async () => {
    const { client } = await spawnReal();
    try {
      await client.catalogSetServers(everythingServers());
      const listed = await listedResources(client);
      const doc = listed.resources.find((r) => r.uri === 'demo://resource/static/document/features.md');
      assert.ok(doc, JSON.stringify(listed.resources.map((r) => r.uri)));
      assert.equal(doc.serverId, 'everything');
      assert.equal(doc.mimeType, 'text/markdown');
      // Without serverId: every enabled server's, each item naming its server.
      const all = await client.catalogListResources();
      assert.ok(all.resources.some((r) => r.uri === doc.uri && r.serverId === 'everything'));

      const read = (await client.catalogReadResource({ serverId: 'everything', uri: doc.uri })) as { contents: { uri: string; text?: string }[] };
      assert.equal(read.contents[0].uri, doc.uri);
      assert.ok((read.contents[0].text ?? '').length > 0);

      const templates = await client.catalogListResourceTemplates({ serverId: 'everything' });
      const text = templates.resourceTemplates.find((t) => t.uriTemplate === 'demo://resource/dynamic/text/{resourceId}');
      assert.ok(text, JSON.stringify(templates));
      const dynamic = (await client.catalogReadResource({ serverId: 'everything', uri: 'demo://resource/dynamic/text/7' })) as { contents: { text: string }[] };
      assert.match(dynamic.contents[0].text, /^Resource 7: This is a plaintext resource/);

      const prompts = await client.catalogListPrompts({ serverId: 'everything' });
      assert.ok(prompts.prompts.some((p) => p.name === 'simple-prompt' && p.serverId === 'everything'), JSON.stringify(prompts));
      const got = (await client.catalogGetPrompt({
        serverId: 'everything',
        name: 'completable-prompt',
        arguments: { department: 'Sales', name: 'Eve' },
      })) as { messages: { content: { text: string } }[] };
      assert.equal(got.messages[0].content.text, 'Please promote Eve to the head of the Sales team.');

      const done = await client.catalogComplete({
        serverId: 'everything',
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'name', value: '' },
        context: { arguments: { department: 'Engineering' } },
      });
      assert.deepEqual((done.completion as { values: string[] }).values, ['Alice', 'Bob', 'Charlie']);
    } finally {
      await client.close();
    }
  });

  it('a subscribed resource reports catalog/resourceUpdated to onResourceUpdated', async () => {
    const updates: ResourceUpdatedParams[] = [];
    const { client } = await spawnReal({ onResourceUpdated: (p) => updates.push(p) });
    try {
      await client.catalogSetServers(everythingServers());
      const uri = 'demo://resource/static/document/features.md';
      await listedResources(client);
      await client.catalogSubscribeResource({ serverId: 'everything', uri });
      // server-everything sends updates of subscribed resources once its toggle tool runs.
      const { registered } = await client.registrySyncMcp({});
      const toggle = registered.find((n) => n.endsWith('__toggleSubscriberUpdates'));
      assert.ok(toggle, JSON.stringify(registered));
      const r = await client.toolInvoke({ name: toggle, arguments: {} });
      assert.equal(r.isError, false, JSON.stringify(r));
      await waitUntil(() => updates.length > 0, 15000);
      assert.deepEqual(updates[0], { serverId: 'everything', uri });
      await client.catalogUnsubscribeResource({ serverId: 'everything', uri });
    } finally {
      await client.close();
    }
  });

  it('a server that offers no prompts is an error naming it (-32016), not an empty list', async () => {
    const { client } = await spawnReal();
    try {
      // basic-vanillajs offers tools and resources (its view), no prompts.
      const script = path.join(REFERENCE_SERVERS, 'server-basic-vanillajs/dist/index.js');
      await client.catalogSetServers({ servers: [{ id: 'basic', name: 'basic', enabled: true, transport: { type: 'stdio', command: process.execPath, args: [script, '--stdio'] } }] });
      const end = Date.now() + 15000;
      let err: unknown;
      for (;;) {
        try {
          const r = await client.catalogListPrompts({ serverId: 'basic' });
          err = new Error(`answered ${JSON.stringify(r)}`);
          if (!r.pending?.length) break;
        } catch (e) {
          err = e;
          break;
        }
        if (Date.now() > end) break;
        await sleep(50);
      }
      assert.ok(err instanceof ToolregRpcError, String(err));
      assert.equal(err.code, -32016);
      assert.deepEqual(err.data, { serverId: 'basic', method: 'prompts/list' });
    } finally {
      await client.close();
    }
  });
});
