#!/usr/bin/env node
// Round-trip overhead of the client: the median time of N trivial requests
// (`registry/list {namespace: "none"}`) through ToolregClient, vs the same frames written and
// read on the raw pipe without the client. Sequential (one request in flight), after a warm-up.
//   node bench/roundtrip.mjs [N]      (build first: npm run build)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolregClient } from '../dist/src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(here, '..', process.env.TOOLREG_BIN ?? '../../target/release/toolreg');
const N = Number(process.argv[2] ?? 2000);
const WARMUP = 200;
const now = () => process.hrtime.bigint();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function viaClient() {
  const client = await ToolregClient.spawn({ binaryPath: BIN });
  const times = [];
  for (let i = 0; i < WARMUP + N; i++) {
    const t0 = now();
    await client.registryList({ namespace: 'none' });
    if (i >= WARMUP) times.push(Number(now() - t0) / 1000);
  }
  await client.close();
  return times;
}

async function rawPipe() {
  const child = spawn(BIN, ['serve'], { stdio: ['pipe', 'pipe', 'ignore'] });
  let buf = Buffer.alloc(0);
  let waiting = null;
  child.stdout.on('data', (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /content-length:\s*(\d+)/i.exec(buf.subarray(0, end).toString('latin1'));
      const len = Number(m[1]);
      if (buf.length < end + 4 + len) return;
      const body = buf.subarray(end + 4, end + 4 + len);
      buf = buf.subarray(end + 4 + len);
      const msg = JSON.parse(body.toString('utf8'));
      const w = waiting;
      waiting = null;
      w(msg);
    }
  });
  let id = 0;
  const call = (method, params) =>
    new Promise((resolve) => {
      waiting = resolve;
      const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }));
      child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]));
    });
  await call('initialize', {});
  const times = [];
  for (let i = 0; i < WARMUP + N; i++) {
    const t0 = now();
    const r = await call('registry/list', { namespace: 'none' });
    if (!r.result) throw new Error(JSON.stringify(r));
    if (i >= WARMUP) times.push(Number(now() - t0) / 1000);
  }
  await call('shutdown');
  child.stdin.end(`Content-Length: 33\r\n\r\n{"jsonrpc":"2.0","method":"exit"}`);
  await new Promise((r) => child.on('close', r));
  return times;
}

// One whole discarded pass of each first (JIT, CPU frequency).
await rawPipe();
await viaClient();
const raw = await rawPipe();
const cli = await viaClient();
const fmt = (xs) => `median ${median(xs).toFixed(1)} µs, p90 ${pct(xs, 0.9).toFixed(1)} µs`;
console.log(`node ${process.version}, N=${N} sequential registry/list {namespace:"none"} (after ${WARMUP} warm-up and a discarded pass)`);
console.log(`raw pipe:          ${fmt(raw)}`);
console.log(`toolreg-client:    ${fmt(cli)}`);
console.log(`ratio client/raw:  ${(median(cli) / median(raw)).toFixed(2)}x (+${(median(cli) - median(raw)).toFixed(1)} µs per call)`);
