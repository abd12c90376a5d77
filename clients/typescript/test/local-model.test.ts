// The local model found by the client (localModel), against the REAL binary and the REAL model
// (all-MiniLM-L6-v2 int8, scripts/embedding-model.sh). Here it is found through
// TOOLREG_EMBEDDING_DIR (<checkout>/target/embedding, helpers.ts MODEL_DIR); the npm layout (@toolreg/model-minilm and
// onnxruntime-node installed beside toolreg-client) is checked by scripts/package.sh as a new user.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { EMBEDDING_DIR_ENV, LEXICAL_NOTICE, findLocalModel } from '../src/index.js';
import { MODEL_DIR, entry, sleep, spawnReal } from './helpers.js';

// The queries share no word with the tool they need (tests/semantic.rs).
const TOOLS: [string, string][] = [
  ['create_branch', 'Create a new branch in a GitHub repository'],
  ['send_message', 'Send a message to a Slack channel'],
  ['get_forecast', 'Get the weather forecast for a location'],
  ['create_event', "Create an event in the user's calendar"],
  ['run_query', 'Run a read-only SQL query against the database'],
  ['translate_text', 'Translate text between languages'],
];

function withoutDir(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TOOLREG_DEBUG_METHODS: '1' };
  delete env[EMBEDDING_DIR_ENV];
  return env;
}

describe('the local model (real binary, real model)', () => {
  it('without a model the search is lexical, and the warning comes once', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }) => w.code === 'TOOLREG_LEXICAL' && warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      assert.equal(findLocalModel(withoutDir()), undefined, 'no model may be installed beside this client');
      for (let i = 0; i < 2; i++) {
        const { client, transcript } = await spawnReal({ env: withoutDir() });
        try {
          const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
          assert.equal(init.msg.params.search, undefined);
          assert.equal(client.localModel, undefined);
          await client.registryRegister({ entries: [entry('get_forecast', { defer: 'always', description: TOOLS[2]![1] })] });
          const plan = await client.expositionPlan({ scope: {}, contextWindow: 128000 });
          const r = await client.toolInvoke({ name: 'tool_search', arguments: { query: 'will it rain in Paris tomorrow' }, planId: plan.planId });
          assert.deepEqual((r.raw as any).hits, []);
          assert.equal((r.raw as any).semantic, undefined);
        } finally {
          await client.close();
        }
      }
      await sleep(10); // warnings are emitted on the next tick
      assert.deepEqual(warnings, [LEXICAL_NOTICE]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('with a model it is sent, and the search finds tools that share no word with the query', async () => {
    const env = { ...process.env, TOOLREG_DEBUG_METHODS: '1', [EMBEDDING_DIR_ENV]: MODEL_DIR };
    assert.ok(findLocalModel(env), `no model in ${MODEL_DIR}: run scripts/embedding-model.sh`);
    const { client, transcript } = await spawnReal({ env, cacheDir: fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-ts-model-')) });
    try {
      const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
      assert.deepEqual(init.msg.params.search, { embeddings: client.localModel });
      assert.equal(client.localModel!.model, path.join(MODEL_DIR, 'model.onnx'));
      await client.registryRegister({ entries: TOOLS.map(([n, d]) => entry(n, { defer: 'always', description: d })) });
      const plan = await client.expositionPlan({ scope: {}, contextWindow: 128000 });
      const deadline = Date.now() + 180000;
      let raw: any;
      for (;;) {
        raw = (await client.toolInvoke({ name: 'tool_search', arguments: { query: 'will it rain in Paris tomorrow' }, planId: plan.planId })).raw;
        if (raw.semantic?.used && raw.semantic.embedded === TOOLS.length) break;
        assert.ok(Date.now() < deadline, `the pool was not embedded: ${JSON.stringify(raw.semantic)}`);
        await sleep(100);
      }
      assert.equal(raw.hits[0].name, 'get_forecast', JSON.stringify(raw));
      assert.match(raw.semantic.model, /^onnx:/);
    } finally {
      await client.close();
    }
  });

  it('localModel: false keeps the search lexical even with a model at hand', async () => {
    const env = { ...process.env, TOOLREG_DEBUG_METHODS: '1', [EMBEDDING_DIR_ENV]: MODEL_DIR };
    const { client, transcript } = await spawnReal({ env, localModel: false });
    try {
      const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
      assert.equal(init.msg.params.search, undefined);
    } finally {
      await client.close();
    }
  });
});
