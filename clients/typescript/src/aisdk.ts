// Vercel AI SDK (`ai` >= 5) adapter: an exposition plan -> the `tools` object of generateText /
// streamText, every call routed to the sidecar's `tool/invoke` with the plan's id. With `ai` >= 7
// and `toolSearch`, the AI SDK's own deferral: every deferred tool `deferLoading`, and its
// `toolSearch` ranked by toolreg's `tool_search`.
import * as ai from 'ai';
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
  /**
   * `ai` >= 7: the AI SDK's own tool search. The inline tools as without it; every deferred tool
   * of the plan as a tool with `deferLoading: true` (its schema asked for when the AI SDK loads
   * it), run through `tool/invoke`; and `tool_search`, made with the AI SDK's
   * `toolSearch({search, maxResults})`, whose `search` is toolreg's `tool_search` for the plan
   * (BM25F, the gloss, the semantic signal when one is configured), whatever the plan's
   * `search`. Works for a portable and an Anthropic-rendered plan. The result is then a Promise
   * (the deferred definitions come from the sidecar: `exposition/definitions`).
   */
  toolSearch?: boolean | { maxResults?: number };
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

/** What a call of a tool gives `toModelOutput`: `ai` 5 the result, 6 and later `{toolCallId, input, output}`. */
function modelOutput(arg: InvokeResult | { output: InvokeResult }): unknown {
  const result = 'isError' in arg ? arg : arg.output;
  return toAiSdkOutput(result.output);
}

/** `execute` of a tool: `tool/invoke` under the plan, with the call's id. */
function invoker(client: ToolregClient, plan: PlanResult, name: string, options: AiSdkOptions) {
  return async (input: unknown, ctx: { toolCallId?: string; abortSignal?: AbortSignal } = {}) => {
    const params: Parameters<ToolregClient['toolInvoke']>[0] = { name, arguments: input, planId: plan.planId };
    const callId = options.callId ?? ctx.toolCallId;
    if (callId !== undefined) params.callId = callId;
    // The whole result (with `raw` for the UI); the model gets `output` via toModelOutput.
    return client.toolInvoke(params, ctx.abortSignal ? { signal: ctx.abortSignal } : {});
  };
}

export function toAiSdkTools(client: ToolregClient, plan: PlanResult, options: AiSdkOptions & { toolSearch: true | { maxResults?: number } }): Promise<AiSdkTools>;
export function toAiSdkTools(client: ToolregClient, plan: PlanResult, options?: AiSdkOptions & { toolSearch?: false }): AiSdkTools;
export function toAiSdkTools(client: ToolregClient, plan: PlanResult, options: AiSdkOptions = {}): AiSdkTools | Promise<AiSdkTools> {
  if (options.toolSearch) return withToolSearch(client, plan, options);
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
      spec.execute = invoker(client, plan, def.name, options);
      // The sidecar's ModelOutput ({type: 'text' | 'json' | 'error-text' | 'error-json' |
      // 'content', value}) is the AI SDK's tool-result output shape; content parts are named
      // for the installed version.
      spec.toModelOutput = modelOutput;
    }
    if (approvalSupported && placement?.reason === 'approval') spec.needsApproval = true;
    tools[def.name] = tool(spec as unknown as Tool);
  }
  return { tools, systemPrompt: plan.systemPrompt ?? undefined };
}

/** The meta-tools the AI SDK's own search stands in for. */
const SEARCH_META = new Set(['tool_search', 'tool_inspect', 'tool_invoke']);

/**
 * `toolSearch: true`: the plan's inline tools (its meta-tools of search aside), every deferred
 * tool with `deferLoading` and a lazy schema, and the AI SDK's `toolSearch` searching with
 * toolreg's `tool_search`. The definitions of a pool of thousands cost names and descriptions
 * up front; a tool's schema is asked for when its search finds it (all found ones in one call).
 */
async function withToolSearch(client: ToolregClient, plan: PlanResult, options: AiSdkOptions): Promise<AiSdkTools> {
  const make = (ai as unknown as { toolSearch?: (o: { search: (q: { query: string }) => Promise<string[]>; maxResults?: number }) => Tool }).toolSearch;
  if (typeof make !== 'function') {
    throw new Error(`toAiSdkTools: toolSearch needs ai >= 7 (its toolSearch and deferLoading); the installed ai is ${installedAiMajor() ?? 'unknown'}`);
  }
  const inline: PlanResult = { ...plan, tools: plan.tools.filter((d) => !(SEARCH_META.has(d.name) && plan.placements[d.name]?.reason === 'meta')) };
  const { tools } = toAiSdkTools(client, { ...inline, request: undefined }, { ...options, toolSearch: false });
  const defs = await client.expositionDefinitions({ planId: plan.planId, schemas: false });
  if (defs.tools.length === 0) return { tools, systemPrompt: plan.systemPrompt ?? undefined };
  const schemas = new Map<string, unknown>();
  const fetchSchemas = async (names: string[]) => {
    const wanted = names.filter((n) => !schemas.has(n));
    if (wanted.length === 0) return;
    const got = await client.expositionDefinitions({ planId: plan.planId, names: wanted });
    for (const d of got.tools) schemas.set(d.name, d.inputSchema ?? { type: 'object' });
  };
  for (const def of defs.tools) {
    if (def.name in tools) continue;
    const schemaOf = async () => {
      await fetchSchemas([def.name]);
      return (schemas.get(def.name) ?? { type: 'object' }) as Parameters<typeof jsonSchema>[0];
    };
    const spec: Record<string, unknown> = {
      description: def.description,
      // Resolved when the AI SDK first sends the tool, after a search found it.
      inputSchema: jsonSchema(schemaOf as unknown as Parameters<typeof jsonSchema>[0]),
      execute: invoker(client, plan, def.name, options),
      toModelOutput: modelOutput,
      deferLoading: true,
    };
    tools[def.name] = tool(spec as unknown as Tool);
  }
  const maxResults = Math.min(typeof options.toolSearch === 'object' ? (options.toolSearch.maxResults ?? 5) : 5, 50);
  const search = async ({ query }: { query: string }): Promise<string[]> => {
    const found = await client.toolInvoke({ name: 'tool_search', arguments: { query, limit: maxResults }, planId: plan.planId });
    const hits = ((found.raw as { hits?: { name: string }[] } | undefined)?.hits ?? []).map((h) => h.name).filter((n) => n in tools);
    await fetchSchemas(hits);
    return hits;
  };
  tools['tool_search'] = make({ search, maxResults });
  return { tools, systemPrompt: defs.systemPrompt ?? undefined };
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
      throw new Error("toAiSdkTools: toolreg's own search answers tool_reference blocks, which the AI SDK cannot send; ask for search 'provider', or pass toolSearch: true (ai >= 7)");
    }
    const spec: Record<string, unknown> = {
      description: def.description,
      inputSchema: jsonSchema((def.input_schema ?? { type: 'object' }) as Parameters<typeof jsonSchema>[0]),
      execute: invoker(client, plan, def.name, options),
      toModelOutput: modelOutput,
    };
    if (def.defer_loading) spec.providerOptions = { anthropic: { deferLoading: true } };
    tools[def.name] = tool(spec as unknown as Tool);
  }
  return { tools, systemPrompt: plan.systemPrompt ?? undefined };
}
