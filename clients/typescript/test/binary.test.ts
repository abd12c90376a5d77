// Finding the binary and refusing a sidecar of another protocol version. The refusal is checked
// against a stand-in sidecar (a few lines of Node answering `initialize` with another version):
// no second release of toolreg exists on this machine to play the older or newer sidecar. The
// real binary's version is checked by every other test, which would fail to spawn otherwise.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PROTOCOL_VERSION, ToolregClient, ToolregProtocolVersionError, platformPackageSuffix, protocolCompatible, resolveBinary } from '../src/index.js';
import { BIN } from './helpers.js';

function standIn(version: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-standin-'));
  const file = path.join(dir, 'old-toolreg');
  fs.writeFileSync(
    file,
    `#!${process.execPath}
let buf = Buffer.alloc(0);
process.stdin.on('data', (c) => {
  buf = Buffer.concat([buf, c]);
  const end = buf.indexOf('\\r\\n\\r\\n');
  if (end < 0) return;
  const n = Number(/content-length: *(\\d+)/i.exec(buf.subarray(0, end).toString())[1]);
  if (buf.length < end + 4 + n) return;
  const msg = JSON.parse(buf.subarray(end + 4, end + 4 + n).toString());
  buf = buf.subarray(end + 4 + n);
  if (msg.method !== 'initialize') return;
  const body = JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: ${JSON.stringify(version)}, serverInfo: { name: 'toolreg', version: '9.9.9' }, capabilities: {} } });
  process.stdout.write('Content-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body);
});
`,
  );
  fs.chmodSync(file, 0o755);
  return file;
}

describe('protocol version', () => {
  it('follows the compatibility rule', () => {
    const cases: [string, string, boolean][] = [
      ['0.1', '0.1', true], ['0.1', '0.2', false], ['0.2', '0.1', false], ['1.2', '1.3', true],
      ['1.3', '1.2', false], ['1.0', '2.0', false], ['0.1', 'x', false], ['0.1', '0.1.0', false],
    ];
    for (const [c, s, ok] of cases) assert.equal(protocolCompatible(c, s), ok, `${c} vs ${s}`);
  });

  it('refuses a sidecar of another protocol version, naming both', async () => {
    const other = (PROTOCOL_VERSION as string) === '0.99' ? '0.98' : '0.99';
    const file = standIn(other);
    await assert.rejects(ToolregClient.spawn({ binaryPath: file }), (e: unknown) => {
      assert.ok(e instanceof ToolregProtocolVersionError, String(e));
      assert.match(e.message, new RegExp(`speaks protocol ${other.replace('.', '\\.')}`));
      assert.ok(e.message.includes(`speaks protocol ${PROTOCOL_VERSION}`) && e.message.includes(file), e.message);
      return true;
    });
  });

  it('accepts the same stand-in when it speaks our version', async () => {
    const client = await ToolregClient.spawn({ binaryPath: standIn(PROTOCOL_VERSION) });
    assert.equal(client.initializeResult.protocolVersion, PROTOCOL_VERSION);
    client.kill();
  });

  it('is what the real binary speaks', async () => {
    const client = await ToolregClient.spawn({ binaryPath: BIN });
    assert.equal(client.initializeResult.protocolVersion, PROTOCOL_VERSION);
    assert.equal((await client.close()).code, 0);
  });
});

describe('binary resolution', () => {
  it('takes the explicit path, then TOOLREG_BIN, then the platform package, then PATH', () => {
    assert.equal(resolveBinary('/x/explicit', { TOOLREG_BIN: '/x/env' }), '/x/explicit');
    assert.equal(resolveBinary(undefined, { TOOLREG_BIN: '/x/env' }), '/x/env');
    // No @toolreg/cli-* package is installed in the repository's own node_modules.
    assert.equal(resolveBinary(undefined, {}), 'toolreg');
  });

  it('names the platform packages as npm lays them out', () => {
    assert.equal(platformPackageSuffix('linux', 'x64', false), 'linux-x64-gnu');
    assert.equal(platformPackageSuffix('linux', 'arm64', true), 'linux-arm64-musl');
    assert.equal(platformPackageSuffix('darwin', 'arm64'), 'darwin-arm64');
    assert.equal(platformPackageSuffix('win32', 'x64'), 'win32-x64');
    // This machine (the only one the project builds on) is glibc Linux on x64.
    assert.equal(platformPackageSuffix(), 'linux-x64-gnu');
  });
});
