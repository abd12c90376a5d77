// The README's example, runnable today: npm run build && node dist/examples/quickstart.js [path/to/toolreg]
import { ToolregClient } from '../src/index.js';
import { toAiSdkTools } from '../src/aisdk.js';

const toolreg = await ToolregClient.spawn({
  binaryPath: process.argv[2] ?? process.env.TOOLREG_BIN ?? '../../target/release/toolreg',
  onApprovalRequest: async ({ name }) => (name === 'delete_all' ? { decision: 'deny', reason: 'no' } : 'approve'),
  onExit: ({ code, signal }) => console.log('toolreg ended', { code, signal }),
});
await toolreg.registryRegister({
  entries: [{ name: 'notes_create', namespace: 'notes', description: 'Create a note.', inputSchema: { type: 'object', properties: { title: { type: 'string' } } } }],
});
const plan = await toolreg.expositionPlan({ scope: { settings: { enableWebSearch: true } }, contextWindow: 128000, model: 'gpt-4o' });
console.log(plan.decision, plan.tools.map((t) => t.name));
const { tools, systemPrompt } = toAiSdkTools(toolreg, plan);
console.log('AI SDK tools:', Object.keys(tools), 'system prompt section:', systemPrompt ?? '(none)');
const ac = new AbortController();
console.log(await toolreg.registryList({ query: 'note' }, { signal: ac.signal }));
await toolreg.close();
