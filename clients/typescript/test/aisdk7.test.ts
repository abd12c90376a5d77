// AI SDK 7's own tool search backed by toolreg (issue 55), as an app gets it: the packed client
// (`npm pack`) and ai@7 installed from the registry into a scratch project, and the AI SDK's own
// loop (generateText with its MockLanguageModelV4, which stands in for a provider: there is no
// network to one here) run there by test/ai7/loop.mjs against the real sidecar and the fixture
// MCP server serving four real catalogs (google-calendar, gmail, github, notion). The dev
// dependency `ai` of this package is 5, whose behaviour the other tests keep.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { toAiSdkTools } from '../src/aisdk.js';
import { BIN, FIXTURE_MCP, entry, spawnReal } from './helpers.js';

/** The ai 7 the check installs: the newest 7.x when it was written (toolSearch, deferLoading). */
const AI7 = '7.0.173';
const pkgDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const catalogs = path.resolve(pkgDir, '../../../shared/fixtures/mcp-catalogs');

/** The fixture server's tools: the four catalogs' tools, one per name. */
function defs(): unknown[] {
  const seen = new Set<string>();
  const out: unknown[] = [];
  for (const server of ['google-calendar', 'gmail', 'github', 'notion']) {
    const cat = JSON.parse(fs.readFileSync(path.join(catalogs, `${server}.json`), 'utf8')) as { tools: { name: string }[] };
    for (const t of cat.tools) if (!seen.has(t.name)) (seen.add(t.name), out.push(t));
  }
  return out;
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('AI SDK 7 toolSearch backed by tool_search (scratch project: packed client + ai@7)', () => {
  it('the first step offers no deferred tool; a Chinese request finds the calendar tool, which runs through tool/invoke', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-ai7-'));
    const packed = npm(['pack', '--ignore-scripts', '--silent', '--pack-destination', work], pkgDir).trim().split('\n').pop()!;
    fs.writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'scratch-ai7', private: true, type: 'module' }));
    npm(['install', '--no-audit', '--no-fund', '--loglevel=error', path.join(work, packed), `ai@${AI7}`], work);
    const installed = JSON.parse(fs.readFileSync(path.join(work, 'node_modules/ai/package.json'), 'utf8')).version;
    assert.equal(installed, AI7);
    fs.copyFileSync(path.join(pkgDir, 'test/ai7/loop.mjs'), path.join(work, 'loop.mjs'));
    const defsFile = path.join(work, 'defs.json');
    fs.writeFileSync(defsFile, JSON.stringify(defs()));
    const callsFile = path.join(work, 'calls.txt');
    const out = execFileSync(process.execPath, ['loop.mjs', BIN, FIXTURE_MCP, defsFile, callsFile, work], { cwd: work, encoding: 'utf8' });
    const reports = JSON.parse(out) as any[];
    assert.deepEqual(reports.map((r) => r.render), ['portable', 'anthropic']);
    for (const r of reports) {
      const calendar = r.deferred.find((n: string) => n.endsWith('__createEvent'));
      assert.ok(calendar, `${r.render}: the calendar tool is deferred (${r.deferred.length} deferred)`);
      assert.ok(r.deferred.length > 100, `${r.render}: the pool is deferred`);
      // Step 1: the search tool and the inline tools only, no deferred tool.
      const first: string[] = r.offered[0];
      assert.ok(first.includes('tool_search'), `${r.render}: ${first}`);
      assert.deepEqual(first.filter((n) => r.deferred.includes(n)), [], `${r.render}: a deferred tool offered up front`);
      assert.ok(!first.includes('tool_invoke') && !first.includes('tool_inspect'), `${r.render}: toolreg's meta-tools are not needed`);
      assert.match(r.systemPrompt, /find it with tool_search; the tools it finds are loaded and you call them directly/);
      // The Chinese request, searched by toolreg's tool_search under the plan, found the calendar tool.
      assert.ok(r.found.includes(calendar), `${r.render}: found ${r.found}`);
      assert.ok(r.invokes.some((p: any) => p.name === 'tool_search' && p.planId === r.planId && p.arguments.query === '帮我在日历上建一个明天下午三点的会'));
      // Step 2: the found tools are loaded, with their schemas asked for then.
      assert.ok(r.offered[1].includes(calendar));
      assert.deepEqual(r.offeredSchemas[1][calendar].required, ['calendarId', 'summary', 'start', 'end']);
      assert.ok(r.definitions.some((p: any) => p.names?.includes(calendar)), `${r.render}: the schema came from exposition/definitions`);
      // The call went through tool/invoke under the plan with the AI SDK's call id, reached the
      // server, and its answer reached the model.
      const call = r.invokes.find((p: any) => p.name === calendar);
      assert.deepEqual(call, { name: calendar, arguments: { calendarId: 'primary', summary: '会议', start: '2026-12-06T15:00:00', end: '2026-12-06T16:00:00' }, planId: r.planId, callId: 'call-cal' });
      assert.equal(r.calendarOutput.type, 'text');
      assert.match(r.calendarOutput.value, /^create-event called with/);
      assert.equal(r.text, 'done');
    }
    assert.deepEqual(fs.readFileSync(callsFile, 'utf8').split('\n').filter(Boolean), ['create-event', 'create-event'], 'the server ran it, once per rendering');
  });

  it('with the installed ai 5, toolSearch is refused and names the version it needs', async () => {
    const { client } = await spawnReal();
    try {
      await client.registryRegister({ entries: Array.from({ length: 8 }, (_, i) => entry(`crm_tool_${i}`, { defer: 'always' })) });
      const plan = await client.expositionPlan({ scope: {} });
      await assert.rejects(toAiSdkTools(client, plan, { toolSearch: true }), /toolSearch needs ai >= 7/);
    } finally {
      await client.close();
    }
  });
});
