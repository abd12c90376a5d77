import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolregClient, type SpawnOptions, type ToolEntry } from '../src/index.js';

const here = path.dirname(fileURLToPath(import.meta.url)); // dist/test
const pkgDir = path.resolve(here, '../..');
export const BIN = path.resolve(pkgDir, process.env.TOOLREG_BIN ?? '../../target/release/toolreg');
/** The embedding model `scripts/embedding-model.sh` fetches: always `<checkout>/target/embedding`,
 *  whatever `CARGO_TARGET_DIR` (and so BIN's folder) is, as for the Rust and Python tests. */
export const MODEL_DIR = path.resolve(pkgDir, '../../target/embedding');
/** The project's fixture MCP server (built with the sidecar): env TOOLREG_FIXTURE_MCP, else next to BIN. */
export const FIXTURE_MCP = path.resolve(pkgDir, process.env.TOOLREG_FIXTURE_MCP ?? path.join(path.dirname(BIN), 'toolreg-fixture-mcp'));

/** The official MCP reference servers, installed by `npm ci --prefix tests/reference-servers`. */
export const REFERENCE_SERVERS = path.resolve(pkgDir, '../../tests/reference-servers/node_modules/@modelcontextprotocol');

/** `catalog/setServers` params with the reference server-everything (resources, prompts, completions) as `everything`. */
export function everythingServers() {
  const script = path.join(REFERENCE_SERVERS, 'server-everything/dist/index.js');
  if (!fs.existsSync(script)) throw new Error(`no ${script}: run npm ci --prefix tests/reference-servers`);
  return { servers: [{ id: 'everything', name: 'Everything', enabled: true, transport: { type: 'stdio' as const, command: 'node', args: [script, 'stdio'] } }] };
}

/** `catalog/setServers` params with the fixture MCP server as server `fx`, started with `args`. */
export function fixtureServers(args: string[]) {
  return { servers: [{ id: 'fx', name: 'fx', enabled: true, transport: { type: 'stdio' as const, command: FIXTURE_MCP, args } }] };
}

export interface Recorded {
  dir: 'in' | 'out';
  msg: { id?: unknown; method?: string; params?: any; result?: any; error?: any };
}

/** Spawns the real binary with the debug methods and a transcript file. */
export async function spawnReal(opts: SpawnOptions = {}): Promise<{ client: ToolregClient; transcript: () => Recorded[] }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-ts-'));
  const rec = path.join(dir, 'session.jsonl');
  const client = await ToolregClient.spawn({
    binaryPath: BIN,
    args: ['serve', '--record', rec],
    env: { ...process.env, TOOLREG_DEBUG_METHODS: '1' },
    ...opts,
  });
  const transcript = () =>
    fs.existsSync(rec)
      ? fs
          .readFileSync(rec, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Recorded)
          .filter((r) => 'dir' in r) // the first line is a header, not a message
      : [];
  return { client, transcript };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitUntil(pred: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await sleep(10);
  }
}

export function entry(name: string, extra: Partial<ToolEntry> = {}): ToolEntry {
  return {
    name,
    namespace: 'notes',
    description: `Tool ${name}: does something with notes.\nMore detail on the second line.`,
    inputSchema: { type: 'object', properties: { title: { type: 'string', description: 'The title.' } }, required: ['title'] },
    ...extra,
  };
}
