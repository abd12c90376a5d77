// Vercel AI SDK (`ai` >= 5) adapter: an exposition plan -> the `tools` object of generateText /
// streamText, every call routed to the sidecar's `tool/invoke` with the plan's id.
import { jsonSchema, tool, type Tool } from 'ai';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import type { InvokeResult, PlanResult } from './generated/protocol.js';
import type { ToolregClient } from './index.js';

export interface AiSdkOptions {
  /** A fixed callId for every invocation; default: the AI SDK's `toolCallId`. */
  callId?: string;
  /**
   * Mark approval-gated tools (`placements[name].reason === 'approval'`) `needsApproval: true`.
   * `'auto'` (default): only when the installed `ai` supports it (v6 and later).
   */
  needsApproval?: boolean | 'auto';
  /** Include the host's own client tools (reason `client`) without `execute`. Default false. */
  includeClientTools?: boolean;
  /**
   * Plans rendered `anthropic` with `search: 'provider'`: the AI SDK's provider-defined search
   * tool to send in its place, e.g. `anthropic.tools.toolSearchBm25_20251119()` from
   * `@ai-sdk/anthropic`. Required for such plans.
   */
  providerSearchTool?: Tool;
}

export interface AiSdkTools {
  tools: Record<string, Tool>;
  /** The `<DEFERRED_TOOLS>` section to add to the system prompt, or undefined when nothing is deferred. */
  systemPrompt: string | undefined;
}

let cachedAiMajor: number | null | undefined;
/** The major version of the installed `ai` package, or null when it cannot be found. */
export function installedAiMajor(): number | null {
  if (cachedAiMajor !== undefined) return cachedAiMajor;
  cachedAiMajor = null;
  try {
    const require = createRequire(import.meta.url);
    const pkg = JSON.parse(fs.readFileSync(require.resolve('ai/package.json'), 'utf8')) as { version?: string };
    const major = Number.parseInt(String(pkg.version).split('.')[0] ?? '', 10);
    cachedAiMajor = Number.isFinite(major) ? major : null;
  } catch {
    cachedAiMajor = null;
  }
  return cachedAiMajor;
}

type Part = { type: 'text'; text: string } | { type: 'image-data'; data: string; mediaType: string } | { type: 'file-data'; data: string; mediaType: string; filename?: string };

/**
 * The sidecar's output as the installed `ai` takes it from `toModelOutput`: the same shape but
 * for `content` parts, which each major names its own way (5: `media`; 6: `image-data` and
 * `file-data`, the sidecar's; 7: `file` with tagged data). `major`: the installed one by default.
 */
export function toAiSdkOutput(output: InvokeResult['output'], major: number | null = installedAiMajor()): unknown {
  if (output.type !== 'content') return output;
  const parts = output.value as Part[];
  const convert = (p: Part): Record<string, unknown> => {
    if (p.type === 'text') return p;
    if ((major ?? 5) <= 5) return { type: 'media', data: p.data, mediaType: p.mediaType };
    if ((major ?? 5) === 6) return p;
    const file: Record<string, unknown> = { type: 'file', mediaType: p.mediaType, data: { type: 'data', data: p.data } };
    if (p.type === 'file-data' && p.filename !== undefined) file.filename = p.filename;
    return file;
  };
  return { type: 'content', value: parts.map(convert) };
}

/**
 * The rendering a plan's `request` is in, from its tools' shape. A Gemini plan
 * (`functionDeclarations`) is the portable plan in Gemini's words: its `tools` serve as they are.
 */
function renderingOf(plan: PlanResult): 'portable' | 'anthropic' | 'openai' {
  const req = plan.request as { tools?: { type?: string; input_schema?: unknown; functionDeclarations?: unknown }[] } | undefined;
  if (!req?.tools || req.tools.some((t) => t.functionDeclarations !== undefined)) return 'portable';
  return req.tools.some((t) => t.type === 'function' || t.type === 'namespace' || t.type === 'tool_search') ? 'openai' : 'anthropic';
}

export function toAiSdkTools(client: ToolregClient, plan: PlanResult, options: AiSdkOptions = {}): AiSdkTools {
  const rendering = renderingOf(plan);
  if (rendering === 'openai') {
    throw new Error(
      "toAiSdkTools: the AI SDK cannot send OpenAI namespaces or a client tool_search; use plan.request with the openai SDK (see openaiToolOutput), or render 'portable'",
    );
  }
  if (rendering === 'anthropic') return nativeAnthropicTools(client, plan, options);
  const wantApproval = options.needsApproval ?? 'auto';
  const approvalSupported = wantApproval === 'auto' ? (installedAiMajor() ?? 0) >= 6 : wantApproval;
  const tools: Record<string, Tool> = {};
  for (const def of plan.tools) {
    const placement = plan.placements[def.name];
    const isClient = placement?.reason === 'client';
    if (isClient && !options.includeClientTools) continue;
    const schema = jsonSchema((def.inputSchema ?? { type: 'object' }) as Parameters<typeof jsonSchema>[0]);
    const spec: Record<string, unknown> = { description: def.description, inputSchema: schema };
    if (!isClient) {
      spec.execute = async (input: unknown, ctx: { toolCallId?: string; abortSignal?: AbortSignal } = {}) => {
        const params: Parameters<ToolregClient['toolInvoke']>[0] = { name: def.name, arguments: input, planId: plan.planId };
        const callId = options.callId ?? ctx.toolCallId;
        if (callId !== undefined) params.callId = callId;
        // The whole result (with `raw` for the UI); the model gets `output` via toModelOutput.
        return client.toolInvoke(params, ctx.abortSignal ? { signal: ctx.abortSignal } : {});
      };
      // The sidecar's ModelOutput ({type: 'text' | 'json' | 'error-text' | 'error-json' |
      // 'content', value}) is the AI SDK's tool-result output shape; content parts are named
      // for the installed version.
      spec.toModelOutput = (result: InvokeResult) => toAiSdkOutput(result.output);
    }
    if (approvalSupported && placement?.reason === 'approval') spec.needsApproval = true;
    tools[def.name] = tool(spec as unknown as Tool);
  }
  return { tools, systemPrompt: plan.systemPrompt ?? undefined };
}

/**
 * An `anthropic`-rendered plan as AI SDK tools: every request tool runs through `tool/invoke`;
 * deferred ones carry `providerOptions.anthropic.deferLoading` (honoured by `@ai-sdk/anthropic`
 * 3 and later), and the hosted search is the provider tool the host passes. Our own client
 * search needs `tool_reference` blocks in a tool result, which the AI SDK cannot send: use
 * `search: 'provider'` here, or `anthropicToolResult` with `@anthropic-ai/sdk`.
 */
function nativeAnthropicTools(client: ToolregClient, plan: PlanResult, options: AiSdkOptions): AiSdkTools {
  const defs = (plan.request as { tools: { type?: string; name: string; description?: string; input_schema?: unknown; defer_loading?: boolean }[] }).tools;
  const tools: Record<string, Tool> = {};
  for (const def of defs) {
    if (def.type !== undefined) {
      if (!options.providerSearchTool) throw new Error(`toAiSdkTools: the plan uses the hosted ${def.name}; pass providerSearchTool`);
      tools[def.name] = options.providerSearchTool;
      continue;
    }
    if (def.name === 'tool_search' && plan.placements[def.name]?.reason === 'meta') {
      throw new Error("toAiSdkTools: toolreg's own search answers tool_reference blocks, which the AI SDK cannot send; ask for search 'provider'");
    }
    const spec: Record<string, unknown> = {
      description: def.description,
      inputSchema: jsonSchema((def.input_schema ?? { type: 'object' }) as Parameters<typeof jsonSchema>[0]),
      execute: async (input: unknown, ctx: { toolCallId?: string; abortSignal?: AbortSignal } = {}) => {
        const params: Parameters<ToolregClient['toolInvoke']>[0] = { name: def.name, arguments: input, planId: plan.planId };
        const callId = options.callId ?? ctx.toolCallId;
        if (callId !== undefined) params.callId = callId;
        return client.toolInvoke(params, ctx.abortSignal ? { signal: ctx.abortSignal } : {});
      },
      toModelOutput: (result: InvokeResult) => toAiSdkOutput(result.output),
    };
    if (def.defer_loading) spec.providerOptions = { anthropic: { deferLoading: true } };
    tools[def.name] = tool(spec as unknown as Tool);
  }
  return { tools, systemPrompt: plan.systemPrompt ?? undefined };
}
