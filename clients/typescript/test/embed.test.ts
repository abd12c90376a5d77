// onEmbed: the host's embedding model behind tool_search, against the REAL binary. The host's
// model is a small deterministic one written for the test (a few concept dimensions), standing in
// for the host's embedding API: under test is the client's plumbing (initialize sends
// search.embeddings.kind = 'host', host/embed reaches onEmbed, its vectors reach the search); the
// ranking with a real model is tests/semantic.rs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { EmbedParams } from '../src/index.js';
import { entry, sleep, spawnReal } from './helpers.js';

const CONCEPTS = [
  ['rain', 'weather', 'forecast', 'sunny'],
  ['meeting', 'schedule', 'calendar', 'event'],
  ['email', 'mail', 'message'],
];

function toyVector(text: string): number[] {
  const v = [...CONCEPTS.map(() => 0), 0.1];
  for (const w of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    CONCEPTS.forEach((c, i) => {
      if (c.includes(w)) v[i]! += 1;
    });
  }
  return v;
}

describe('host embeddings (real binary)', () => {
  it('onEmbed turns on hybrid tool_search and its vectors rank the tools', async () => {
    const asked: EmbedParams[] = [];
    const { client, transcript } = await spawnReal({
      cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-ts-embed-')),
      onEmbed: (p) => (asked.push(p), { vectors: p.texts.map(toyVector), model: 'toy-concepts' }),
    });
    try {
      const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
      assert.deepEqual(init.msg.params.search, { embeddings: { kind: 'host' } });
      await client.registryRegister({
        entries: [
          entry('get_forecast', { defer: 'always', description: 'Returns the forecast for a city.' }),
          entry('create_event', { defer: 'always', description: 'Adds an event to the calendar.' }),
          entry('send_email', { defer: 'always', description: 'Sends an email message.' }),
        ],
      });
      const plan = await client.expositionPlan({ scope: {}, contextWindow: 128000 });
      const deadline = Date.now() + 20000;
      let raw: any;
      for (;;) {
        const r = await client.toolInvoke({ name: 'tool_search', arguments: { query: 'will it rain in Paris tomorrow' }, planId: plan.planId });
        assert.equal(r.isError, false, JSON.stringify(r));
        raw = r.raw;
        if (raw.semantic.embedded === 3 && raw.semantic.used) break;
        assert.ok(Date.now() < deadline, `the pool was not embedded: ${JSON.stringify(raw.semantic)}`);
        await sleep(50);
      }
      // No word of the query is in get_forecast's entry: only the host's vectors find it.
      assert.equal(raw.hits[0].name, 'get_forecast', JSON.stringify(raw));
      assert.equal(raw.semantic.model, 'host:toy-concepts');
      assert.deepEqual(new Set(asked.map((p) => p.purpose)), new Set(['document', 'query']));
      const documents = asked.filter((p) => p.purpose === 'document').flatMap((p) => p.texts);
      assert.equal(documents.length, 3, JSON.stringify(documents));
      assert.equal(new Set(documents).size, 3);
    } finally {
      assert.equal((await client.close()).code, 0);
    }
  });

  it('without onEmbed no search settings are sent', async () => {
    const { client, transcript } = await spawnReal();
    try {
      const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
      assert.equal(init.msg.params.search, undefined);
    } finally {
      assert.equal((await client.close()).code, 0);
    }
  });
});
