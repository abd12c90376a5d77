import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ToolregRpcError } from '../src/index.js';
import { installedAiMajor, toAiSdkOutput, toAiSdkTools } from '../src/aisdk.js';
import { entry, spawnReal } from './helpers.js';

/** A mock model whose first step is `first` (tool calls) and whose second answers `text`; every call's options go to `prompts`. */
function twoSteps(MockLanguageModelV2: any, prompts: any[], first: unknown[], text: string) {
  let step = 0;
  return new MockLanguageModelV2({
    doGenerate: async (options: any) => {
      prompts.push(options);
      const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
      if (step++ === 0) return { content: first, finishReason: 'tool-calls', usage, warnings: [] };
      return { content: [{ type: 'text', text }], finishReason: 'stop', usage, warnings: [] };
    },
  });
}

describe('AI SDK adapter', () => {
  it('turns a plan into ai tools routed to tool/invoke with planId and callId', async () => {
    const { client, transcript } = await spawnReal();
    try {
      const big = (i: number) =>
        entry(`big_tool_${i}`, { namespace: 'bulk', description: `Bulk tool ${i}. ` + 'Many options here. '.repeat(60) });
      await client.registryRegister({ entries: [...Array.from({ length: 6 }, (_, i) => big(i)), entry('notes_delete', { approval: true })] });
      const plan = await client.expositionPlan({
        scope: {},
        contextWindow: 8000,
        clientTools: [{ name: 'my_tool', description: 'Mine.', inputSchema: { type: 'object' } }],
      });
      const { tools, systemPrompt } = toAiSdkTools(client, plan);
      assert.deepEqual(Object.keys(tools).sort(), ['notes_delete', 'tool_inspect', 'tool_invoke', 'tool_result_read', 'tool_search']);
      assert.equal(systemPrompt, plan.systemPrompt);
      const t = tools['notes_delete'] as any;
      assert.match(t.description, /notes_delete/);
      assert.equal(t.inputSchema.jsonSchema.type, 'object');
      // ai v5 has no tool approval: not marked unless forced
      assert.equal(t.needsApproval, (installedAiMajor() ?? 0) >= 6 ? true : undefined);
      assert.equal((toAiSdkTools(client, plan, { needsApproval: true }).tools['notes_delete'] as any).needsApproval, true);
      assert.equal((toAiSdkTools(client, plan, { needsApproval: true }).tools['tool_search'] as any).needsApproval, undefined);
      assert.ok('my_tool' in toAiSdkTools(client, plan, { includeClientTools: true }).tools);

      const run = (tools['tool_search'] as any).execute({ query: 'bulk' }, { toolCallId: 'tc-1', messages: [] });
      const answered = new Set(client.initializeResult.capabilities.methods);
      if (!answered.has('tool/invoke')) {
        await assert.rejects(run, (e: unknown) => e instanceof ToolregRpcError && e.code === -32601);
      } else {
        await run.catch(() => undefined);
      }
      const fixed = toAiSdkTools(client, plan, { callId: 'fixed-call' });
      await (fixed.tools['notes_delete'] as any).execute({ title: 'x' }, { toolCallId: 'ignored', messages: [] }).catch(() => undefined);
      const invokes = transcript().filter((r) => r.msg.method === 'tool/invoke').map((r) => r.msg.params);
      assert.deepEqual(invokes, [
        { name: 'tool_search', arguments: { query: 'bulk' }, planId: plan.planId, callId: 'tc-1' },
        { name: 'notes_delete', arguments: { title: 'x' }, planId: plan.planId, callId: 'fixed-call' },
      ]);
    } finally {
      await client.close();
    }
  });
});

describe('AI SDK adapter with generateText (mock model, real sidecar)', () => {
  it('the model calls tool_search, the sidecar answers, the model sees the sidecar output', async (t) => {
    const { generateText, stepCountIs } = await import('ai');
    const { MockLanguageModelV2 } = await import('ai/test');
    const { client } = await spawnReal({ onExecuteTool: async () => ({ content: [{ type: 'text', text: 'ran' }] }) });
    try {
      assert.ok(client.initializeResult.capabilities.methods.includes('tool/invoke'), 'the sidecar must answer tool/invoke');
      const bulk = Array.from({ length: 8 }, (_, i) =>
        entry(`crm_tool_${i}`, { namespace: 'crm', description: `CRM operation ${i} on customer records. ` + 'Many options. '.repeat(60) }),
      );
      await client.registryRegister({ entries: bulk });
      const plan = await client.expositionPlan({ scope: {}, contextWindow: 8000 });
      const { tools, systemPrompt } = toAiSdkTools(client, plan);
      const prompts: any[] = [];
      let step = 0;
      const model = new MockLanguageModelV2({
        doGenerate: async (options: any) => {
          prompts.push(options);
          const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
          if (step++ === 0) {
            return {
              content: [{ type: 'tool-call', toolCallId: 'tc-42', toolName: 'tool_search', input: JSON.stringify({ query: 'customer' }) }],
              finishReason: 'tool-calls',
              usage,
              warnings: [],
            };
          }
          return { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage, warnings: [] };
        },
      });
      const result = await generateText({ model, tools, system: systemPrompt, prompt: 'find the customer tools', stopWhen: stepCountIs(3) });
      assert.equal(result.text, 'done');
      const toolResult = result.steps[0]!.toolResults[0] as any;
      assert.equal(toolResult.toolName, 'tool_search');
      assert.equal(toolResult.output.isError, false);
      // The system prompt section reached the model, and the second call carried the sidecar's output.
      assert.match(JSON.stringify(prompts[0].prompt), /DEFERRED_TOOLS/);
      assert.deepEqual(
        prompts[0].tools.map((x: any) => x.name),
        ['tool_search', 'tool_inspect', 'tool_invoke', 'tool_result_read'],
      );
      const toolMsg = prompts[1].prompt.find((m: any) => m.role === 'tool');
      assert.equal(toolMsg.content[0].output.type, 'text');
      assert.match(toolMsg.content[0].output.value, /crm_tool_/);
    } finally {
      await client.close();
    }
  });
});

describe('AI SDK adapter with a natively rendered plan (mock model, real sidecar)', () => {
  it('anthropic: deferred tools carry deferLoading, the hosted search goes in, a loaded tool runs through tool/invoke', async () => {
    const { generateText, stepCountIs } = await import('ai');
    const { MockLanguageModelV2 } = await import('ai/test');
    const { client, transcript } = await spawnReal({ onExecuteTool: async ({ name }) => ({ content: [{ type: 'text', text: `ran ${name}` }] }) });
    try {
      const crm = Array.from({ length: 6 }, (_, i) => entry(`crm_tool_${i}`, { namespace: 'crm', defer: 'always' }));
      await client.registryRegister({ entries: [...crm, entry('notes_delete', { approval: true })] });
      const plan = await client.expositionPlan({ scope: {}, render: 'anthropic', search: 'provider' });
      const bm25 = { type: 'provider-defined', id: 'anthropic.tool_search_bm25_20251119', name: 'tool_search_tool_bm25', args: {}, inputSchema: {} } as any;
      assert.throws(() => toAiSdkTools(client, plan), /providerSearchTool/);
      const { tools, systemPrompt } = toAiSdkTools(client, plan, { providerSearchTool: bm25 });
      assert.deepEqual(Object.keys(tools).sort(), [...crm.map((e) => e.name), 'notes_delete', 'tool_result_read', 'tool_search_tool_bm25'].sort());
      assert.equal(tools['tool_search_tool_bm25'], bm25);
      const ours = await client.expositionPlan({ scope: {}, render: 'anthropic' });
      assert.throws(() => toAiSdkTools(client, ours), /tool_reference/);
      const openai = await client.expositionPlan({ scope: {}, render: 'openai' });
      assert.throws(() => toAiSdkTools(client, openai), /openai SDK/);
      // A Gemini plan is the portable plan in Gemini's words: the same tools (issue 55).
      const gemini = await client.expositionPlan({ scope: {}, render: 'gemini' });
      const portable = await client.expositionPlan({ scope: {} });
      assert.deepEqual(Object.keys(toAiSdkTools(client, gemini).tools).sort(), Object.keys(toAiSdkTools(client, portable).tools).sort());

      const prompts: any[] = [];
      let step = 0;
      const model = new MockLanguageModelV2({
        doGenerate: async (options: any) => {
          prompts.push(options);
          const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
          if (step++ === 0) {
            // The provider's search loaded crm_tool_2; the model calls it directly.
            return { content: [{ type: 'tool-call', toolCallId: 'toolu_9', toolName: 'crm_tool_2', input: JSON.stringify({ title: 'x' }) }], finishReason: 'tool-calls', usage, warnings: [] };
          }
          return { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage, warnings: [] };
        },
      });
      const result = await generateText({ model, tools, system: systemPrompt, prompt: 'use a crm tool', stopWhen: stepCountIs(3) });
      assert.equal(result.text, 'done');
      const sent = prompts[0].tools as any[];
      const deferred = sent.filter((t) => t.providerOptions?.anthropic?.deferLoading === true).map((t) => t.name).sort();
      assert.deepEqual(deferred, crm.map((e) => e.name).sort(), 'every deferred tool, and only those');
      assert.ok(sent.some((t) => t.type === 'provider-defined' && t.name === 'tool_search_tool_bm25'));
      assert.match(JSON.stringify(prompts[0].prompt), /DEFERRED_TOOLS/);
      const invoked = transcript().filter((r) => r.msg.method === 'tool/invoke').map((r) => r.msg.params);
      assert.deepEqual(invoked, [{ name: 'crm_tool_2', arguments: { title: 'x' }, planId: plan.planId, callId: 'toolu_9' }]);
    } finally {
      await client.close();
    }
  });
});

describe('AI SDK adapter with a tool that returns an image (mock model, real sidecar)', () => {
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAABQAAAAUCAYAAACNiR0N';
  it('the model gets the image as a content part named for the installed ai', async () => {
    const { generateText, stepCountIs } = await import('ai');
    const { MockLanguageModelV2 } = await import('ai/test');
    const { client } = await spawnReal({
      onExecuteTool: async () => ({ content: [{ type: 'text', text: 'the screen' }, { type: 'image', data: PNG, mimeType: 'image/png' }] }),
    });
    try {
      await client.registryRegister({ entries: [entry('screenshot', { defer: 'never' })] });
      const plan = await client.expositionPlan({ scope: {}, contextWindow: 200000, model: 'gpt-4o' });
      const { tools } = toAiSdkTools(client, plan);
      const prompts: any[] = [];
      const model = twoSteps(MockLanguageModelV2, prompts, [{ type: 'tool-call', toolCallId: 'tc-shot', toolName: 'screenshot', input: '{"title":"x"}' }], 'I see it');
      const result = await generateText({ model, tools, prompt: 'look at the screen', stopWhen: stepCountIs(3) });
      assert.equal(result.text, 'I see it');
      const toolMsg = prompts[1].prompt.find((m: any) => m.role === 'tool');
      const major = installedAiMajor();
      const image = major === 5 ? { type: 'media', data: PNG, mediaType: 'image/png' } : major === 6 ? { type: 'image-data', data: PNG, mediaType: 'image/png' } : { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG } };
      assert.deepEqual(toolMsg.content[0].output, { type: 'content', value: [{ type: 'text', text: 'the screen' }, image] });
    } finally {
      await client.close();
    }
  });

  it('converts content parts for each ai major', () => {
    const output = { type: 'content' as const, value: [{ type: 'text' as const, text: 't' }, { type: 'image-data' as const, data: 'AA', mediaType: 'image/png' }, { type: 'file-data' as const, data: 'BB', mediaType: 'audio/wav', filename: 'a.wav' }] };
    assert.deepEqual((toAiSdkOutput(output, 5) as any).value.slice(1), [{ type: 'media', data: 'AA', mediaType: 'image/png' }, { type: 'media', data: 'BB', mediaType: 'audio/wav' }]);
    assert.deepEqual(toAiSdkOutput(output, 6), output);
    assert.deepEqual((toAiSdkOutput(output, 7) as any).value.slice(1), [
      { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'AA' } },
      { type: 'file', mediaType: 'audio/wav', data: { type: 'data', data: 'BB' }, filename: 'a.wav' },
    ]);
    assert.deepEqual(toAiSdkOutput({ type: 'text', value: 'x' }, 5), { type: 'text', value: 'x' });
  });
});
