#!/usr/bin/env node
// Records one short, representative session of this client against `toolreg serve --record` and
// saves it as a replayable transcript (replayed by `cargo test --test transcripts`).
//
//   npm run record-transcript            (or: npm run build && node scripts/record-transcript.mjs [out.jsonl])
//
// Binary: $TOOLREG_BIN (default ../../target/release/toolreg). Output default:
// ../../tests/transcripts/client-typescript.jsonl. The session: initialize with hostTools +
// approval, register two host tools (one approval-gated, one `defer: "always"`), registry/list,
// exposition/plan, tool/invoke of the gated tool (the callbacks approve and answer), tool/invoke
// of tool_search with the planId, shutdown + exit. No MCP servers: their timing is not
// deterministic, and the replay expects every run of sidecar messages exactly.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolregClient } from '../dist/src/index.js';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binary = path.resolve(pkg, process.env.TOOLREG_BIN ?? '../../target/release/toolreg');
const out = path.resolve(process.argv[2] ?? path.join(pkg, '../../tests/transcripts/client-typescript.jsonl'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-record-ts-'));
const rec = path.join(tmp, 'session.jsonl');

const client = await ToolregClient.spawn({
  binaryPath: binary,
  args: ['serve', '--record', rec],
  clientInfo: { name: 'toolreg-client-ts', version: '0.1.0' },
  onApprovalRequest: () => 'approve',
  onExecuteTool: ({ name, arguments: args }) => ({
    content: [{ type: 'text', text: `${name} done: ${JSON.stringify(args)}` }],
  }),
});
const fail = (what, v) => {
  client.kill('SIGKILL');
  throw new Error(`${what}: ${JSON.stringify(v)}`);
};

await client.registryRegister({
  entries: [
    {
      name: 'notes_delete',
      namespace: 'notes',
      description: 'Delete a note by its title. Cannot be undone.',
      inputSchema: { type: 'object', properties: { title: { type: 'string', description: 'The title of the note.' } }, required: ['title'] },
      approval: true,
    },
    {
      name: 'notes_archive',
      namespace: 'notes',
      description: 'Move a note to the archive.',
      inputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      defer: 'always',
    },
  ],
});
await client.registryList({});
const plan = await client.expositionPlan({ scope: {}, contextWindow: 128000, model: 'gpt-4o' });
// Lean plans list no deferred names: the namespace figures say notes_archive went.
if (plan.tokens.perNamespace.notes?.deferred !== 1) fail('notes_archive should be deferred', plan.tokens.perNamespace);
const deleted = await client.toolInvoke({ name: 'notes_delete', arguments: { title: 'Groceries' }, callId: 'call-1' });
if (deleted.isError) fail('notes_delete failed', deleted);
const found = await client.toolInvoke({ name: 'tool_search', arguments: { query: 'archive' }, planId: plan.planId, callId: 'call-2' });
if (found.isError || !JSON.stringify(found.raw).includes('notes_archive')) fail('tool_search did not find notes_archive', found);
const exit = await client.close();
if (exit.code !== 0) fail('the sidecar did not exit cleanly', exit);

fs.mkdirSync(path.dirname(out), { recursive: true });
fs.copyFileSync(rec, out);
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`recorded ${fs.readFileSync(out, 'utf8').split('\n').filter(Boolean).length} messages to ${out}`);
