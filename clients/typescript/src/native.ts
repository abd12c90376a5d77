// Provider-native deferral (protocol 0.2, issue 10): a plan rendered for the Anthropic Messages
// API or the OpenAI Responses API, and the answers to the model's tool calls in that provider's
// terms. No SDK is needed at run time: the shapes are plain JSON that the official SDKs' types
// accept (the tests check them with tsc against `@anthropic-ai/sdk` and `openai`).
import type { InvokeResult, PlanResult } from './generated/protocol.js';
import type { ToolregClient } from './index.js';

/** The Anthropic request fragment: spread into `messages.create({...})`. */
export interface AnthropicFragment {
  tools: Record<string, unknown>[];
  system?: string;
}

/** The OpenAI request fragment: spread into `responses.create({...})`. */
export interface OpenAIFragment {
  tools: Record<string, unknown>[];
  instructions?: string;
}

/** The plan's `request`, typed for the rendering it was asked in. */
export function anthropicRequest(plan: PlanResult): AnthropicFragment {
  if (!plan.request) throw new Error('the plan was not rendered natively: ask exposition/plan with render "anthropic"');
  return plan.request as AnthropicFragment;
}

export function openaiRequest(plan: PlanResult): OpenAIFragment {
  if (!plan.request) throw new Error('the plan was not rendered natively: ask exposition/plan with render "openai"');
  return plan.request as OpenAIFragment;
}

function outputText(r: InvokeResult): string {
  const v = r.output.value;
  if (r.output.type === 'content') return (v as { type: string; text?: string }[]).flatMap((p) => (p.type === 'text' ? [p.text ?? ''] : [])).join('\n');
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Runs one Anthropic `tool_use` block (our `tool_search` or any tool the model called directly)
 * through the sidecar and returns the `tool_result` block to send back: `tool_reference` blocks
 * for a search, text and `image` blocks for a result with images, the tool's text otherwise.
 */
export async function anthropicToolResult(
  client: ToolregClient,
  plan: PlanResult,
  use: { id: string; name: string; input: unknown },
): Promise<{ type: 'tool_result'; tool_use_id: string; content: string | Record<string, unknown>[]; is_error?: boolean }> {
  const r = await client.toolInvoke({ name: use.name, arguments: use.input, callId: use.id, planId: plan.planId });
  const content = Array.isArray(r.providerOutput) ? (r.providerOutput as Record<string, unknown>[]) : outputText(r);
  return r.isError ? { type: 'tool_result', tool_use_id: use.id, content, is_error: true } : { type: 'tool_result', tool_use_id: use.id, content };
}

/**
 * Runs one OpenAI output item the host executes: a client `tool_search_call` (answered with the
 * sidecar's `tool_search_output` item) or a `function_call` (answered with `function_call_output`,
 * its output a list of `input_text` and `input_image` items when the result has images).
 */
export async function openaiToolOutput(
  client: ToolregClient,
  plan: PlanResult,
  item: { type: 'tool_search_call'; call_id: string | null; arguments: unknown } | { type: 'function_call'; call_id: string; name: string; arguments: string },
): Promise<Record<string, unknown>> {
  if (item.type === 'tool_search_call') {
    const callId = item.call_id ?? 'tool_search';
    const r = await client.toolInvoke({ name: 'tool_search', arguments: item.arguments, callId, planId: plan.planId });
    if (!r.providerOutput) throw new Error('the plan was not rendered for openai: tool_search answered no providerOutput');
    return r.providerOutput as Record<string, unknown>;
  }
  const r = await client.toolInvoke({ name: item.name, arguments: item.arguments, callId: item.call_id, planId: plan.planId });
  if (r.providerOutput) return r.providerOutput as Record<string, unknown>;
  return { type: 'function_call_output', call_id: item.call_id, output: outputText(r) };
}
