// MCP authorization through the client's callbacks, against the REAL binary and the project's
// fixture MCP server in its OAuth mode (its own authorization server): `onOpenUrl` plays a browser
// whose user clicks "allow" (fetch the page, follow its redirect to the sidecar's loopback
// listener), `secrets` keeps the tokens.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { MemorySecretStore, type OpenUrlParams } from '../src/index.js';
import { FIXTURE_MCP, sleep, spawnReal } from './helpers.js';

async function startOAuthFixture() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-oauth-'));
  const portFile = path.join(dir, 'port');
  const child = spawn(FIXTURE_MCP, ['--http', '127.0.0.1:0', '--port-file', portFile, '--tools', '1', '--oauth'], { stdio: 'ignore' });
  const end = Date.now() + 20_000;
  while (!fs.existsSync(portFile)) {
    if (Date.now() > end) throw new Error('the OAuth fixture did not start');
    await sleep(20);
  }
  return { child, url: fs.readFileSync(portFile, 'utf8') };
}

describe('MCP authorization (real binary)', () => {
  it('onOpenUrl and secrets authorize an OAuth-protected server; the transcript never shows a token', async () => {
    const fixture = await startOAuthFixture();
    const opened: OpenUrlParams[] = [];
    const secrets = new MemorySecretStore();
    const { client, transcript } = await spawnReal({
      onOpenUrl: async (p) => {
        opened.push(p);
        const res = await fetch(p.url); // follows the redirect to the loopback listener
        assert.equal(res.status, 200);
      },
      secrets,
    });
    try {
      await client.catalogSetServers({
        servers: [{ id: 'web', name: 'Web', enabled: true, trust: 'auto', transport: { type: 'http', url: fixture.url } }],
      });
      const end = Date.now() + 20_000;
      let state = '';
      while (Date.now() < end) {
        state = (await client.catalogStatus()).servers.find((s) => s.id === 'web')!.state;
        if (state === 'ready') break;
        await sleep(50);
      }
      assert.equal(state, 'ready');
      assert.deepEqual(opened.map((o) => o.serverId), ['web']);
      assert.match(secrets.get('toolreg/oauth/web') ?? '', /access-/);
      await client.registrySyncMcp({});
      const r = await client.toolInvoke({ name: 'mcp__web__echo', arguments: { text: 'hi' }, callId: 'c1' });
      assert.equal(r.isError, false, JSON.stringify(r));
      const text = JSON.stringify(transcript());
      assert.ok(text.includes('host/secrets/set'));
      assert.ok(!text.includes('access-') && !text.includes('refresh-'), 'a token reached the transcript');
    } finally {
      await client.close();
      fixture.child.kill();
    }
  });
});
