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

export function toAiSdkTools(client: ToolregClient, plan: PlanResult, options: AiSdkOptions = {}): AiSdkTools {
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
      // The sidecar's ModelOutput ({type: 'text' | 'json' | 'error-text' | 'error-json', value}) is
      // the AI SDK's tool-result output shape already.
      spec.toModelOutput = (result: InvokeResult) => result.output;
    }
    if (approvalSupported && placement?.reason === 'approval') spec.needsApproval = true;
    tools[def.name] = tool(spec as unknown as Tool);
  }
  return { tools, systemPrompt: plan.systemPrompt ?? undefined };
}
