// A full deferred request with the SPEC 8 method names: plan -> tool_search -> tool_inspect ->
// tool_invoke, and a direct call of an approval-gated tool (approval/request -> approval/respond).
// UNTESTED: `tool/invoke` and the approval flow are not built in the sidecar yet (they answer
// -32601 today, which this example reports and stops at).
//   npm run build && node dist/examples/deferred-flow.js [path/to/toolreg]
import { ToolregClient, ToolregRpcError, type ToolEntry } from '../src/index.js';

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
  // 12 CRM tools of ~100 tokens each: more than 10% of an 8k window and more than the meta-tools
  // cost, so they are deferred behind tool_search.
  const plan = await toolreg.expositionPlan({ scope: {}, contextWindow: 8000, model: 'gpt-4o', include: ['deferred'] });
  console.log('inline:', plan.tools.map((t) => t.name), 'deferred:', (plan.deferred ?? []).length, 'gate:', plan.decision.gate);
  if ((plan.deferred ?? []).length === 0) throw new Error('expected the CRM tools to be deferred');

  const call = (name: string, args: unknown, callId: string) => toolreg.toolInvoke({ name, arguments: args, planId: plan.planId, callId });
  const search = await call('tool_search', { query: 'customer records', limit: 3 }, 'c1');
  console.log('tool_search ->', JSON.stringify(search.output));
  const inspect = await call('tool_inspect', { name: 'crm_tool_3' }, 'c2');
  console.log('tool_inspect ->', JSON.stringify(inspect.output));
  const invoked = await call('tool_invoke', { name: 'crm_tool_3', params: { customerId: 'c-42' } }, 'c3');
  console.log('tool_invoke ->', JSON.stringify(invoked.output), 'isError', invoked.isError);
  const paid = await call('send_invoice', { amount: 12.5 }, 'c4'); // triggers approval/request
  console.log('send_invoice ->', JSON.stringify(paid.output), 'isError', paid.isError);
} catch (e) {
  if (e instanceof ToolregRpcError && e.code === -32601) console.log(`not built in this sidecar yet: ${e.method}`);
  else throw e;
} finally {
  await toolreg.close();
}
