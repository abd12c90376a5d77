// Every native rendering and every providerOutput, as the real sidecar produced them, checked by
// tsc against the official SDKs' types (`@anthropic-ai/sdk`, `openai`; dev dependencies, types
// only). The values are written out as object literals annotated with the SDK types, so excess
// properties, missing fields and wrong literal types all fail the check; a deliberately wrong
// literal is checked too, to show that the check can fail. Issue 27: the same for a plan whose tools
// are marked for the provider's own code execution (`programmatic`).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { PlanResult, Programmatic } from '../src/index.js';
import { anthropicToolResult, openaiToolOutput } from '../src/native.js';
import { entry, everythingServers, sleep, spawnReal } from './helpers.js';

const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const checkDir = path.join(pkgDir, 'dist', 'sdk-check');

function tsc(file: string): { ok: boolean; out: string } {
  const bin = path.join(pkgDir, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [bin, '--noEmit', '--strict', '--target', 'ES2022', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--skipLibCheck', file], {
    cwd: pkgDir,
    encoding: 'utf8',
  });
  return { ok: r.status === 0, out: `${r.stdout}${r.stderr}` };
}

const lit = (v: unknown) => JSON.stringify(v, null, 1);

/** Writes `source` as `name` beside the other checks and runs tsc over it. */
function tscFile(name: string, source: string): { ok: boolean; out: string } {
  fs.mkdirSync(checkDir, { recursive: true });
  const file = path.join(checkDir, name);
  fs.writeFileSync(file, source);
  return tsc(file);
}
const HEADER = `import type { MessageCreateParamsNonStreaming, Tool as AnthropicTool, ToolResultBlockParam, ToolUnion } from '@anthropic-ai/sdk/resources/messages';
import type { FunctionTool, ResponseCreateParamsNonStreaming, ResponseInputItem, ResponseToolSearchOutputItemParam, Tool } from 'openai/resources/responses/responses';
`;

describe('native renderings against the official SDK types', () => {
  it('requests and providerOutputs type-check as Anthropic and OpenAI SDK params', async () => {
    const { client } = await spawnReal({ onExecuteTool: async ({ name }) => ({ content: [{ type: 'text', text: `ran ${name}` }] }) });
    try {
      const crm = Array.from({ length: 14 }, (_, i) =>
        entry(`crm_tool_${i}`, { namespace: i < 7 ? 'mcp:crm' : 'mcp:billing', defer: 'always', description: `CRM operation ${i} on customer records.` }),
      );
      await client.registryRegister({ entries: [...crm, entry('notes_delete', { approval: true }), entry('notes_create', { defer: 'never' })] });
      const plan = (render: 'anthropic' | 'openai', search: 'toolreg' | 'provider', programmatic?: Programmatic) =>
        client.expositionPlan({ scope: {}, contextWindow: 8000, model: 'gpt-4o', render, search, ...(programmatic ? { programmatic } : {}) }) as Promise<PlanResult>;
      const a = await plan('anthropic', 'toolreg');
      const aHosted = await plan('anthropic', 'provider');
      const o = await plan('openai', 'toolreg');
      const oHosted = await plan('openai', 'provider');
      // Marked for the provider's code execution: every registered tool but the approval-gated one.
      const aProg = await plan('anthropic', 'toolreg', {});
      const aOnly = await plan('anthropic', 'provider', { codeExecution: 'code_execution_20260120', direct: false });
      const oProg = await plan('openai', 'toolreg', {});
      const aTools = Object.fromEntries((aProg.request as any).tools.map((t: any) => [t.name ?? t.type, t]));
      assert.deepEqual(aTools.notes_create.allowed_callers, ['direct', 'code_execution_20250825']);
      assert.deepEqual(aTools.crm_tool_3.allowed_callers, ['direct', 'code_execution_20250825']);
      assert.equal(aTools.notes_delete.allowed_callers, undefined, 'an approval-gated tool is never marked');
      assert.equal(aTools.tool_search.allowed_callers, undefined);
      assert.deepEqual(aTools.code_execution, { type: 'code_execution_20250825', name: 'code_execution' });
      const only = Object.fromEntries((aOnly.request as any).tools.map((t: any) => [t.name, t]));
      assert.deepEqual(only.notes_create.allowed_callers, ['code_execution_20260120']);
      assert.equal(only.code_execution.type, 'code_execution_20260120');
      const oTools: any[] = (oProg.request as any).tools;
      assert.ok(oTools.some((t) => t.type === 'programmatic_tool_calling'));
      const oFns = Object.fromEntries(oTools.filter((t) => t.type === 'function').map((t) => [t.name, t]));
      assert.deepEqual(oFns.notes_create.allowed_callers, ['direct', 'programmatic']);
      assert.equal(oFns.notes_delete.allowed_callers, undefined);
      const members = oTools.filter((t) => t.type === 'namespace').flatMap((t) => t.tools);
      assert.equal(members.length, 14);
      assert.ok(members.every((m: any) => m.allowed_callers.join() === 'direct,programmatic'));
      const oProgSearch = await openaiToolOutput(client, oProg, { type: 'tool_search_call', call_id: 'call_09', arguments: { query: 'customer records' } });
      const loaded = (oProgSearch as any).tools.flatMap((ns: any) => ns.tools);
      assert.ok(loaded.length > 0 && loaded.every((m: any) => m.allowed_callers.join() === 'direct,programmatic'));

      const aHit = await anthropicToolResult(client, a, { id: 'toolu_01', name: 'tool_search', input: { query: 'customer records' } });
      const aMiss = await anthropicToolResult(client, a, { id: 'toolu_02', name: 'tool_search', input: { query: 'zebra xylophone' } });
      const aDirect = await anthropicToolResult(client, a, { id: 'toolu_03', name: 'crm_tool_3', input: { title: 'x' } });
      assert.equal((aHit.content as any[])[0].type, 'tool_reference');
      assert.equal((aMiss.content as any[])[0].type, 'text');
      assert.equal(aDirect.content, 'ran crm_tool_3');
      const oSearch = await openaiToolOutput(client, o, { type: 'tool_search_call', call_id: 'call_01', arguments: { query: 'customer records' } });
      const oDirect = await openaiToolOutput(client, o, { type: 'function_call', call_id: 'call_02', name: 'crm_tool_3', arguments: '{"title":"x"}' });
      assert.equal(oSearch.type, 'tool_search_output');
      assert.deepEqual(oDirect, { type: 'function_call_output', call_id: 'call_02', output: 'ran crm_tool_3' });

      const anthropic = (p: PlanResult) => ({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'hi' }], ...(p.request as object) });
      const openai = (p: PlanResult) => ({ model: 'gpt-5.4', input: 'hi', ...(p.request as object) });
      const source = `${HEADER}
export const a: MessageCreateParamsNonStreaming = ${lit(anthropic(a))};
export const aHosted: MessageCreateParamsNonStreaming = ${lit(anthropic(aHosted))};
export const aTools: ToolUnion[] = ${lit((a.request as any).tools)};
export const aHit: ToolResultBlockParam = ${lit(aHit)};
export const aMiss: ToolResultBlockParam = ${lit(aMiss)};
export const aDirect: ToolResultBlockParam = ${lit(aDirect)};
export const aTurn: MessageCreateParamsNonStreaming = ${lit({ ...anthropic(a), messages: [{ role: 'user', content: 'find a crm tool' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'tool_search', input: { query: 'customer records' } }] }, { role: 'user', content: [aHit] }] })};
export const o: ResponseCreateParamsNonStreaming = ${lit(openai(o))};
export const oHosted: ResponseCreateParamsNonStreaming = ${lit(openai(oHosted))};
export const oTools: Tool[] = ${lit((o.request as any).tools)};
export const oSearch: ResponseToolSearchOutputItemParam = ${lit(oSearch)};
export const oTurn: ResponseInputItem[] = ${lit([{ type: 'tool_search_call', call_id: 'call_01', arguments: { query: 'customer records' }, execution: 'client', status: 'completed' }, oSearch, oDirect])};
export const aProg: MessageCreateParamsNonStreaming = ${lit(anthropic(aProg))};
export const aOnly: MessageCreateParamsNonStreaming = ${lit(anthropic(aOnly))};
export const aProgTools: ToolUnion[] = ${lit((aProg.request as any).tools)};
export const oProg: ResponseCreateParamsNonStreaming = ${lit(openai(oProg))};
export const oProgTools: Tool[] = ${lit(oTools)};
export const oProgSearch: ResponseToolSearchOutputItemParam = ${lit(oProgSearch)};
`;
      fs.mkdirSync(checkDir, { recursive: true });
      const good = path.join(checkDir, 'rendered.ts');
      fs.writeFileSync(good, source);
      const r = tsc(good);
      assert.ok(r.ok, `tsc refused the rendered values:\n${r.out}`);

      // The check can fail: a deferred tool with a wrong field, and a reference block misnamed.
      const bad = path.join(checkDir, 'wrong.ts');
      fs.writeFileSync(bad, `${HEADER}
export const t: ToolUnion = { name: 'x', input_schema: { type: 'object' }, defer_loading: 'yes' };
export const b: ToolResultBlockParam = { type: 'tool_result', tool_use_id: 't', content: [{ type: 'tool_reference', name: 'x' }] };
export const s: ResponseToolSearchOutputItemParam = { type: 'tool_search_output', tools: [{ type: 'namespace', name: 'n', tools: [] }] };
export const p: AnthropicTool = { name: 'x', input_schema: { type: 'object' }, allowed_callers: ['code_execution'] };
export const f: FunctionTool = { type: 'function', name: 'x', parameters: {}, strict: false, allowed_callers: ['code'] };
`);
      const w = tsc(bad);
      assert.equal(w.ok, false);
      assert.match(w.out, /defer_loading/);
      assert.match(w.out, /tool_name|'name' does not exist/);
      assert.match(w.out, /description/);
      assert.match(w.out, /'"code_execution"' is not assignable/);
      assert.match(w.out, /'"code"' is not assignable/);
    } finally {
      await client.close();
    }
  });

  it('a real screenshot (server-everything) type-checks as an Anthropic image block and an OpenAI input_image', async () => {
    const { client } = await spawnReal();
    try {
      // Under the default sandbox, as a user's server runs.
      await client.catalogSetServers(everythingServers());
      const end = Date.now() + 60000;
      let name: string | undefined;
      while (!name) {
        const synced = await client.registrySyncMcp({});
        const listed = await client.registryList({});
        name = [...synced.registered, ...listed.entries.map((e) => e.name)].find((n) => /tiny.?image/i.test(n));
        if (Date.now() > end) throw new Error('server-everything never listed its image tool');
        if (!name) await sleep(200);
      }
      const plan = (render: 'anthropic' | 'openai') => client.expositionPlan({ scope: {}, contextWindow: 200000, model: 'claude-sonnet-4-5', render }) as Promise<PlanResult>;
      const shot = await anthropicToolResult(client, await plan('anthropic'), { id: 'toolu_07', name, input: {} });
      const blocks = shot.content as any[];
      const image = blocks.find((b) => b.type === 'image');
      assert.equal(image.source.type, 'base64');
      assert.equal(image.source.media_type, 'image/png');
      assert.match(image.source.data, /^iVBORw0KGgo/);
      const oShot = await openaiToolOutput(client, await plan('openai'), { type: 'function_call', call_id: 'call_07', name, arguments: '{}' });
      const items = (oShot as any).output as any[];
      assert.equal(oShot.type, 'function_call_output');
      assert.equal(items.find((i) => i.type === 'input_image').image_url, `data:image/png;base64,${image.source.data}`);
      const source = `${HEADER}
export const shot: ToolResultBlockParam = ${lit(shot)};
export const turn: MessageCreateParamsNonStreaming = ${lit({ model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [{ role: 'user', content: 'take a screenshot' }, { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_07', name, input: {} }] }, { role: 'user', content: [shot] }] })};
export const oShot: ResponseInputItem = ${lit(oShot)};
export const oTurn: ResponseInputItem[] = ${lit([{ type: 'function_call', call_id: 'call_07', name, arguments: '{}' }, oShot])};
`;
      const r = tscFile('screenshot.ts', source);
      assert.ok(r.ok, `tsc refused the screenshot results:\n${r.out}`);
      // The check can fail: a media type Anthropic does not take, an image item misnamed.
      const w = tscFile('screenshot-wrong.ts', `${HEADER}
export const b: ToolResultBlockParam = { type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: 'x' } }] };
export const o: ResponseInputItem = { type: 'function_call_output', call_id: 'c', output: [{ type: 'image', image_url: 'data:image/png;base64,x' }] };
`);
      assert.equal(w.ok, false);
      assert.match(w.out, /image\/bmp/);
      assert.match(w.out, /'"image"' is not assignable/);
    } finally {
      await client.close();
    }
  });
});
