// The local models found by the client (localModel, localModels), against the REAL binary and the
// REAL models (all-MiniLM-L6-v2 int8 and USE-m3, scripts/embedding-model.sh). Here they are found
// through TOOLREG_EMBEDDING_DIR (<checkout>/target/embedding, helpers.ts MODEL_DIR), and USE-m3 in
// a node_modules laid out as npm lays out @toolreg/model-use-m3; the whole npm install (the model
// tarballs and onnxruntime-node beside toolreg-client) is checked by scripts/package.sh as a new user.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { EMBEDDING_DIR_ENV, LEXICAL_NOTICE, USE_MODEL_PACKAGE, findLocalModel, findLocalModels, findLocalUseModel } from '../src/index.js';
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
      assert.deepEqual(findLocalModels(withoutDir()), [], 'no model may be installed beside this client');
      for (let i = 0; i < 2; i++) {
        const { client, transcript } = await spawnReal({ env: withoutDir() });
        try {
          const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
          assert.equal(init.msg.params.search, undefined);
          assert.equal(client.localModel, undefined);
          assert.deepEqual(client.localModels, []);
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
      // MODEL_DIR has USE-m3 in use/ too: both go, as a list, MiniLM first.
      assert.deepEqual(init.msg.params.search, { embeddings: client.localModels });
      assert.equal(client.localModel!.model, path.join(MODEL_DIR, 'model.onnx'));
      assert.deepEqual(client.localModels, [
        client.localModel,
        { kind: 'use', weights: path.join(MODEL_DIR, 'use', 'weights.npz'), tokenizer: path.join(MODEL_DIR, 'use', 'tokenizer.json') },
      ]);
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

  it('USE-m3 is found where npm puts @toolreg/model-use-m3', () => {
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-ts-npm-'));
    try {
      const pkg = path.join(app, 'node_modules', USE_MODEL_PACKAGE);
      assert.equal(findLocalUseModel(withoutDir(), app), undefined, 'nothing installed yet');
      fs.mkdirSync(pkg, { recursive: true });
      fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: USE_MODEL_PACKAGE, version: '0.0.0' }));
      fs.copyFileSync(path.join(MODEL_DIR, 'use', 'weights.npz'), path.join(pkg, 'weights.npz'));
      assert.equal(findLocalUseModel(withoutDir(), app), undefined, 'no tokenizer.json yet');
      fs.copyFileSync(path.join(MODEL_DIR, 'use', 'tokenizer.json'), path.join(pkg, 'tokenizer.json'));
      assert.deepEqual(findLocalUseModel(withoutDir(), app), { kind: 'use', weights: path.join(pkg, 'weights.npz'), tokenizer: path.join(pkg, 'tokenizer.json') });
      assert.equal(findLocalUseModel(withoutDir()), undefined, 'not beside this client');
    } finally {
      fs.rmSync(app, { recursive: true, force: true });
    }
  });

  it('USE-m3 alone (no MiniLM, no ONNX Runtime) is sent, and a Chinese query finds a tool no word of it names', async () => {
    // Help me set up a meeting: no word of it in any tool, nor in the gloss (lexical finds nothing).
    const query = '帮我约个会';
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-ts-use-'));
    fs.mkdirSync(path.join(dir, 'use'));
    for (const f of ['weights.npz', 'tokenizer.json']) fs.symlinkSync(path.join(MODEL_DIR, 'use', f), path.join(dir, 'use', f));
    const env = { ...process.env, TOOLREG_DEBUG_METHODS: '1', [EMBEDDING_DIR_ENV]: dir };
    const search = async (localModel: boolean) => {
      const { client, transcript } = await spawnReal({ env, localModel, cacheDir: fs.mkdtempSync(path.join(dir, 'cache-')) });
      try {
        await client.registryRegister({ entries: TOOLS.map(([n, d]) => entry(n, { defer: 'always', description: d })) });
        const plan = await client.expositionPlan({ scope: {}, contextWindow: 128000 });
        const deadline = Date.now() + 180000;
        for (;;) {
          const raw = (await client.toolInvoke({ name: 'tool_search', arguments: { query }, planId: plan.planId })).raw as any;
          if (!localModel || (raw.semantic?.used && raw.semantic.embedded === TOOLS.length)) {
            const init = transcript().find((x) => x.dir === 'in' && x.msg.method === 'initialize')!;
            return { raw, init: init.msg.params, localModel: client.localModel, localModels: client.localModels };
          }
          assert.ok(Date.now() < deadline, `the pool was not embedded: ${JSON.stringify(raw.semantic)}`);
          await sleep(100);
        }
      } finally {
        await client.close();
      }
    };
    try {
      const lexical = await search(false);
      assert.notEqual(lexical.raw.hits[0]?.name, 'create_event', JSON.stringify(lexical.raw));
      const got = await search(true);
      const use = { kind: 'use', weights: path.join(dir, 'use', 'weights.npz'), tokenizer: path.join(dir, 'use', 'tokenizer.json') };
      assert.deepEqual(got.init.search, { embeddings: use });
      assert.equal(got.localModel, undefined);
      assert.deepEqual(got.localModels, [use]);
      assert.match(got.raw.semantic.model, /^use:/);
      assert.equal(got.raw.hits[0].name, 'create_event', JSON.stringify(got.raw));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
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
