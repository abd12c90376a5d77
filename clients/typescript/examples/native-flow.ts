// Provider-native deferral, end to end against a scripted model turn (no network): the plan is
// rendered for the Anthropic Messages API, the deferred tools go out with `defer_loading: true`
// beside our `tool_search`, and each `tool_use` the model sends is answered through the sidecar:
// the search with `tool_reference` blocks (Anthropic then loads those tools), the loaded tool and
// an approval-gated one directly by name.
//   npm run build && node dist/examples/native-flow.js [path/to/toolreg]
import { ToolregClient, anthropicRequest, anthropicToolResult, type PlanResult, type ToolEntry } from '../src/index.js';

const toolreg = await ToolregClient.spawn({
  binaryPath: process.argv[2] ?? process.env.TOOLREG_BIN ?? '../../target/release/toolreg',
  onApprovalRequest: async (req) => {
    console.log(`approval asked for ${req.name}(${JSON.stringify(req.arguments)}): ${req.reason}`);
    return 'approve' as const;
  },
  onExecuteTool: async ({ name, arguments: args }) => ({ content: [{ type: 'text', text: `host ran ${name} ${JSON.stringify(args)}` }] }),
});
try {
  const bulk: ToolEntry[] = Array.from({ length: 12 }, (_, i) => ({
    name: `crm_tool_${i}`,
    namespace: 'crm',
    description: `CRM operation ${i}: ` + 'works on customer records with many options. '.repeat(8),
    inputSchema: { type: 'object', properties: { customerId: { type: 'string' } }, required: ['customerId'] },
  }));
  const gated: ToolEntry = { name: 'send_invoice', namespace: 'billing', description: 'Send an invoice.', approval: true, defer: 'never',
    inputSchema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] } };
  await toolreg.registryRegister({ entries: [...bulk, gated] });

  const plan: PlanResult = await toolreg.expositionPlan({ scope: {}, contextWindow: 8000, model: 'claude-sonnet-4-5', render: 'anthropic' });
  const fragment = anthropicRequest(plan);
  const deferred = fragment.tools.filter((t) => t.defer_loading === true).length;
  console.log(`request: ${fragment.tools.length} tools (${deferred} deferred), ${plan.tokens.inline} tokens up front, planHash ${plan.planHash}`);
  if (deferred === 0) throw new Error('expected the CRM tools to be deferred');
  // What the host sends: anthropic.messages.create({ model, max_tokens, messages, ...fragment }).
  const messages: unknown[] = [{ role: 'user', content: 'Look up customer c-42, then invoice them 12.50.' }];

  // Scripted model turns: search, call what the search loaded, call the approval-gated tool.
  const search = { type: 'tool_use' as const, id: 'toolu_01', name: 'tool_search', input: { query: 'customer records', limit: 2 } };
  const found = await anthropicToolResult(toolreg, plan, search);
  messages.push({ role: 'assistant', content: [search] }, { role: 'user', content: [found] });
  console.log('tool_search ->', JSON.stringify(found.content));
  const loaded = (found.content as { tool_name: string }[])[0]!.tool_name;
  const direct = { type: 'tool_use' as const, id: 'toolu_02', name: loaded, input: { customerId: 'c-42' } };
  const ran = await anthropicToolResult(toolreg, plan, direct);
  messages.push({ role: 'assistant', content: [direct] }, { role: 'user', content: [ran] });
  console.log(`${loaded} ->`, JSON.stringify(ran.content));
  const pay = { type: 'tool_use' as const, id: 'toolu_03', name: 'send_invoice', input: { amount: 12.5 } };
  const paid = await anthropicToolResult(toolreg, plan, pay);
  messages.push({ role: 'assistant', content: [pay] }, { role: 'user', content: [paid] });
  console.log('send_invoice ->', JSON.stringify(paid.content), paid.is_error ? '(error)' : '');

  // The next request plans again; an unchanged plan is a few bytes.
  const again = await toolreg.expositionPlan({ scope: {}, contextWindow: 8000, model: 'claude-sonnet-4-5', render: 'anthropic', ifNoneMatch: plan.planHash });
  console.log('next plan:', 'unchanged' in again ? 'unchanged' : 'changed', `(${messages.length} messages so far)`);
  if (!('unchanged' in again)) throw new Error('expected the same plan');
} finally {
  await toolreg.close();
}
