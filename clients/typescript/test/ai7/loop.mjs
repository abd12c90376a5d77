// Runs in a scratch project where npm installed the packed client and ai@7 (test/aisdk7.test.ts):
// the AI SDK's own loop (generateText with its MockLanguageModelV4) over toAiSdkTools(...,
// {toolSearch: true}), against the real sidecar and the fixture MCP server serving real catalogs.
// The mock model stands in for a provider (no network here); it acts on what it is sent: it
// searches, then calls the calendar tool the search loaded. Prints one JSON report per rendering.
// Usage: node loop.mjs BIN FIXTURE_MCP DEFS_FILE CALLS_FILE WORK_DIR
import fs from 'node:fs';
import path from 'node:path';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { ToolregClient } from 'toolreg-client';
import { toAiSdkTools } from 'toolreg-client/aisdk';

const [bin, fixture, defsFile, callsFile, work] = process.argv.slice(2);
const QUERY = '帮我在日历上建一个明天下午三点的会';
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const stop = (unified) => ({ unified, raw: unified });

async function run(render) {
  const rec = path.join(work, `session-${render}.jsonl`);
  const client = await ToolregClient.spawn({ binaryPath: bin, args: ['serve', '--record', rec] });
  try {
    await client.catalogSetServers({ servers: [{ id: 'fx', name: 'fx', enabled: true, transport: { type: 'stdio', command: fixture, args: ['--defs-file', defsFile, '--calls-file', callsFile] } }] });
    await client.catalogRefresh({ serverId: 'fx' });
    await client.registrySyncMcp({});
    const plan = await client.expositionPlan({ scope: {}, contextWindow: 32000, render, include: ['deferred'] });
    const deferred = (plan.deferred ?? []).map((d) => d.name);
    const { tools, systemPrompt } = await toAiSdkTools(client, plan, { toolSearch: true });
    const prompts = [];
    let step = 0;
    let found = [];
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        prompts.push(options);
        const s = step++;
        if (s === 0) {
          return { content: [{ type: 'tool-call', toolCallId: 'call-search', toolName: 'tool_search', input: JSON.stringify({ query: QUERY }) }], finishReason: stop('tool-calls'), usage, warnings: [] };
        }
        if (s === 1) {
          const result = options.prompt.find((m) => m.role === 'tool')?.content.find((p) => p.toolCallId === 'call-search');
          found = result?.output?.value?.tools?.map((t) => t.name) ?? [];
          const calendar = found.find((n) => n.endsWith('__createEvent'));
          if (!calendar) return { content: [{ type: 'text', text: 'no calendar tool found' }], finishReason: stop('stop'), usage, warnings: [] };
          const args = { calendarId: 'primary', summary: '会议', start: '2026-12-06T15:00:00', end: '2026-12-06T16:00:00' };
          return { content: [{ type: 'tool-call', toolCallId: 'call-cal', toolName: calendar, input: JSON.stringify(args) }], finishReason: stop('tool-calls'), usage, warnings: [] };
        }
        return { content: [{ type: 'text', text: 'done' }], finishReason: stop('stop'), usage, warnings: [] };
      },
    });
    const result = await generateText({ model, tools, system: systemPrompt, prompt: QUERY, stopWhen: stepCountIs(4) });
    const recorded = fs.readFileSync(rec, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((r) => r.dir === 'in');
    const calOutput = prompts[2]?.prompt.find((m) => m.role === 'tool' && m.content.some((p) => p.toolCallId === 'call-cal'))?.content.find((p) => p.toolCallId === 'call-cal')?.output;
    return {
      render,
      planId: plan.planId,
      deferred,
      systemPrompt,
      offered: prompts.map((p) => (p.tools ?? []).map((t) => t.name)),
      offeredSchemas: prompts.map((p) => Object.fromEntries((p.tools ?? []).map((t) => [t.name, t.inputSchema]))),
      found,
      calendarOutput: calOutput,
      text: result.text,
      invokes: recorded.filter((r) => r.msg.method === 'tool/invoke').map((r) => r.msg.params),
      definitions: recorded.filter((r) => r.msg.method === 'exposition/definitions').map((r) => r.msg.params),
    };
  } finally {
    await client.close();
  }
}

const reports = [];
for (const render of ['portable', 'anthropic']) reports.push(await run(render));
process.stdout.write(JSON.stringify(reports));
