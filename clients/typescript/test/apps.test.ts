// MCP Apps through the client: a host that declares `capabilities.apps` sees `ui` on tools,
// reads views, and runs a view's calls with `app: {serverId}`; against the real binary and the
// ext-apps example servers basic-vanillajs and system-monitor (tests/reference-servers).
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { ToolregClient } from '../src/index.js';
import { REFERENCE_SERVERS, sleep, spawnReal } from './helpers.js';

const server = (id: string, pkg: string) => ({
  id,
  name: id,
  enabled: true,
  transport: { type: 'stdio' as const, command: process.execPath, args: [path.join(REFERENCE_SERVERS, pkg, 'dist/index.js'), '--stdio'] },
});

async function ready(client: ToolregClient, ids: string[]) {
  const end = Date.now() + 30000;
  for (const serverId of ids) {
    while ((await client.catalogListTools({ serverId })).state !== 'ready') {
      if (Date.now() > end) throw new Error(`${serverId} not ready`);
      await sleep(50);
    }
  }
}

describe('MCP Apps (ext-apps example servers)', () => {
  it('tools carry ui, views are read, view calls go through tool/invoke with app', async () => {
    const { client } = await spawnReal({ capabilities: { apps: { mimeTypes: ['text/html;profile=mcp-app'] } } });
    try {
      await client.catalogSetServers({ servers: [server('basic', 'server-basic-vanillajs'), server('monitor', 'server-system-monitor')] });
      await ready(client, ['basic', 'monitor']);
      await client.registrySyncMcp({});
      const { entries } = await client.registryList({});
      const byTool = (t: string) => entries.find((e) => e.source?.kind === 'mcp' && e.source.toolName === t)!;
      const getTime = byTool('get-time');
      const poll = byTool('poll-system-stats');
      assert.deepEqual(getTime.ui, { resourceUri: 'ui://get-time/mcp-app.html' });
      assert.deepEqual(poll.ui?.visibility, ['app']);

      const r = await client.toolInvoke({ name: getTime.name, arguments: {} });
      assert.equal(r.isError, false, JSON.stringify(r));
      assert.deepEqual(r.ui, { serverId: 'basic', resourceUri: 'ui://get-time/mcp-app.html' });
      const view = (await client.catalogReadResource({ serverId: 'basic', uri: 'ui://get-time/mcp-app.html' })) as {
        contents: { mimeType: string; text: string }[];
      };
      assert.equal(view.contents[0].mimeType, 'text/html;profile=mcp-app');
      assert.match(view.contents[0].text, /<html/i);

      // The app-only tool: its own server's view may call it, the model may not, nor another view.
      const fromView = await client.toolInvoke({ name: poll.name, arguments: {}, app: { serverId: 'monitor' } });
      assert.equal(fromView.isError, false, JSON.stringify(fromView));
      assert.equal(typeof (fromView.raw as { structuredContent: { memory: { usedPercent: number } } }).structuredContent.memory.usedPercent, 'number');
      const fromModel = await client.toolInvoke({ name: poll.name, arguments: {} });
      assert.equal(fromModel.isError, true);
      const fromOther = await client.toolInvoke({ name: poll.name, arguments: {}, app: { serverId: 'basic' } });
      assert.equal(fromOther.isError, true);
      assert.match(String(fromOther.output.value), /its own server/);
    } finally {
      await client.close();
    }
  });
});
