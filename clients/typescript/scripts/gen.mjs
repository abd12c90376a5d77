#!/usr/bin/env node
// Generates src/generated/protocol.ts from every ../../protocol/*.schema.json.
//   node scripts/gen.mjs            write the file
//   node scripts/gen.mjs --check    regenerate into a temp dir, fail on any difference
// Each schema file describes one method: `title` is the method name, `x-kind` (`request` or
// `notification`) and `x-direction` (`hostToSidecar` or `sidecarToHost`) say what it is,
// `properties.params` / `properties.result` reference the types in `$defs`. All `$defs` are merged into one namespace (a name that two
// files define differently is prefixed with the method's PascalCase name; a definition equal to one already merged, its references
// compared through the names they were merged under, is that one).
import { compile } from 'json-schema-to-typescript';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, '..');
const protocolDir = path.resolve(process.env.TOOLREG_PROTOCOL_DIR ?? path.join(pkg, '../../protocol'));
const outRel = 'src/generated/protocol.ts';

const pascal = (s) => s.split(/[^A-Za-z0-9]+/).filter(Boolean).map((w) => w[0].toUpperCase() + w.slice(1)).join('');
const stable = (v) => JSON.stringify(v, (k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.keys(x).sort().map((key) => [key, x[key]])) : x));

const SHAPE_KEYS = ['type', '$ref', 'oneOf', 'anyOf', 'allOf', 'enum', 'const', 'properties', 'items', 'additionalProperties', 'tsType'];

// Normalizes one schema node for json-schema-to-typescript: a `$ref` with sibling keywords (e.g.
// `default`) is reduced to the bare `$ref` so that it names the shared type instead of a numbered
// copy; a schema that says nothing about its shape (`true`, `{description}`) is `unknown`.
// The name each of a file's `$defs` takes in the merged `defs`: the same definition merged before (under its name, or prefixed by
// the file that merged it), else its own name when free, else prefixed with `method`. A definition's references name the others by
// their merged names, so the names are settled together, until none changes.
function mergedNames(defs, local, method) {
  const renames = {};
  for (let round = 0; round < Object.keys(local).length + 2; round++) {
    let changed = false;
    for (const [name, def] of Object.entries(local)) {
      const mine = stable(rewriteRefs(def, renames));
      const same = Object.keys(defs).filter((k) => (k === name || k.endsWith(name)) && stable(defs[k]) === mine);
      const target = same.includes(name) ? name : same.length > 0 ? same[0] : defs[name] === undefined ? name : pascal(method) + name;
      if ((renames[name] ?? name) !== target) {
        renames[name] = target;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return Object.fromEntries(Object.entries(renames).filter(([n, t]) => n !== t));
}

function rewriteRefs(node, renames, isSchema = true) {
  if (Array.isArray(node)) return node.map((n) => rewriteRefs(n, renames, isSchema));
  if (isSchema && node === true) return { tsType: 'unknown' };
  if (node && typeof node === 'object') {
    if (isSchema && typeof node.$ref === 'string' && node.$ref.startsWith('#/$defs/')) {
      const name = node.$ref.slice('#/$defs/'.length);
      return { $ref: '#/$defs/' + (renames[name] ?? name) };
    }
    if (isSchema && !SHAPE_KEYS.some((k) => k in node)) return { ...node, tsType: 'unknown' };
    const out = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/$defs/')) {
        const name = v.slice('#/$defs/'.length);
        out[k] = '#/$defs/' + (renames[name] ?? name);
      } else if (isSchema && (k === 'properties' || k === '$defs')) {
        out[k] = Object.fromEntries(Object.entries(v).map(([n, sub]) => [n, rewriteRefs(sub, renames, true)]));
      } else if (isSchema && ['items', 'additionalProperties', 'not', 'oneOf', 'anyOf', 'allOf'].includes(k)) {
        out[k] = typeof v === 'boolean' && k === 'additionalProperties' ? v : rewriteRefs(v, renames, true);
      } else out[k] = isSchema && ['default', 'const', 'enum', 'examples'].includes(k) ? v : rewriteRefs(v, renames, false);
    }
    return out;
  }
  return node;
}

function typeOf(prop) {
  if (!prop) return undefined;
  if (prop.$ref) return prop.$ref.slice('#/$defs/'.length);
  return undefined;
}

export async function generate() {
  const files = fs.readdirSync(protocolDir).filter((f) => f.endsWith('.schema.json')).sort();
  if (files.length === 0) throw new Error(`no *.schema.json in ${protocolDir}`);
  const defs = {};
  const methods = [];
  let protocolVersion;
  for (const file of files) {
    const schema = JSON.parse(fs.readFileSync(path.join(protocolDir, file), 'utf8'));
    const method = schema.title;
    if (typeof method !== 'string' || !method) throw new Error(`${file}: no title`);
    if (method === 'initialize') protocolVersion = schema['x-protocolVersion'];
    const kind = schema['x-kind'];
    if (kind !== 'request' && kind !== 'notification') throw new Error(`${file}: x-kind must be "request" or "notification", got ${JSON.stringify(kind)}`);
    const direction = schema['x-direction'];
    if (direction !== 'hostToSidecar' && direction !== 'sidecarToHost') {
      throw new Error(`${file}: x-direction must be "hostToSidecar" or "sidecarToHost", got ${JSON.stringify(direction)}`);
    }
    const local = schema.$defs ?? {};
    const renames = mergedNames(defs, local, method);
    for (const [name, def] of Object.entries(local)) defs[renames[name] ?? name] = rewriteRefs(def, renames);
    const props = rewriteRefs(schema.properties ?? {}, renames);
    // Inline (non-$ref) params/result get a def of their own.
    for (const part of ['params', 'result']) {
      if (props[part] && !props[part].$ref) {
        const name = pascal(method) + pascal(part);
        defs[name] = props[part];
        props[part] = { $ref: '#/$defs/' + name };
      }
    }
    methods.push({ method, kind, direction, params: typeOf(props.params), result: typeOf(props.result), hasResult: 'result' in props, file });
  }
  const names = Object.keys(defs).sort();
  const root = {
    title: 'ProtocolTypes',
    type: 'object',
    description: 'Every type of the protocol (a holder for the generator; not sent on the wire).',
    properties: Object.fromEntries(names.map((n) => [n, { $ref: '#/$defs/' + n }])),
    additionalProperties: false,
    $defs: Object.fromEntries(names.map((n) => [n, { ...defs[n], title: n }])),
  };
  let ts = await compile(root, 'ProtocolTypes', {
    bannerComment: '',
    additionalProperties: false,
    unreachableDefinitions: false,
    strictIndexSignatures: false,
    style: { singleQuote: true, printWidth: 110 },
    format: true,
  });
  const table = (pred) => methods.filter(pred).sort((a, b) => (a.method < b.method ? -1 : a.method > b.method ? 1 : 0));
  const entry = (m) => {
    const p = m.params ?? 'undefined';
    return m.kind === 'request'
      ? `  '${m.method}': { params: ${p}; result: ${m.result ?? (m.hasResult ? 'unknown' : 'unknown')} };`
      : `  '${m.method}': { params: ${p} };`;
  };
  const block = (name, doc, list) => `/** ${doc} */\nexport interface ${name} {\n${list.map(entry).join('\n')}\n}\n`;
  let out = '/* eslint-disable */\n// GENERATED by scripts/gen.mjs from protocol/*.schema.json. Do not edit: run `npm run gen`.\n\n';
  if (typeof protocolVersion !== 'string') throw new Error('initialize.schema.json: no x-protocolVersion');
  out += `/** The protocol version these types describe (MAJOR.MINOR), sent in \`initialize\`. */\nexport const PROTOCOL_VERSION = '${protocolVersion}';\n\n`;
  out += ts.trim() + '\n\n';
  out += block('HostRequests', 'Requests, host to sidecar, that have a schema today.', table((m) => m.kind === 'request' && m.direction === 'hostToSidecar'));
  out += '\n' + block('HostNotifications', 'Notifications, host to sidecar.', table((m) => m.kind === 'notification' && m.direction === 'hostToSidecar'));
  out += '\n' + block('SidecarRequests', 'Requests, sidecar to host.', table((m) => m.kind === 'request' && m.direction === 'sidecarToHost'));
  out += '\n' + block('SidecarNotifications', 'Notifications, sidecar to host.', table((m) => m.kind === 'notification' && m.direction === 'sidecarToHost'));
  out += `\n/** Every method that has a schema file, with its kind and direction. */\nexport const SCHEMA_METHODS = ${JSON.stringify(
    Object.fromEntries(table(() => true).map((m) => [m.method, { kind: m.kind, direction: m.direction }])),
    null,
    2,
  ).replace(/"/g, "'")} as const;\n`;
  return out;
}

const check = process.argv.includes('--check');
const text = await generate();
if (check) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolreg-gen-'));
  const fresh = path.join(tmp, 'protocol.ts');
  fs.writeFileSync(fresh, text);
  const current = fs.existsSync(path.join(pkg, outRel)) ? fs.readFileSync(path.join(pkg, outRel), 'utf8') : null;
  if (current !== text) {
    console.error(`check-gen: ${outRel} differs from what protocol/*.schema.json generates (fresh copy: ${fresh}). Run \`npm run gen\`.`);
    process.exit(1);
  }
  fs.rmSync(tmp, { recursive: true, force: true });
  console.log(`check-gen: ${outRel} is up to date`);
} else {
  fs.mkdirSync(path.join(pkg, 'src/generated'), { recursive: true });
  fs.writeFileSync(path.join(pkg, outRel), text);
  console.log(`wrote ${outRel}`);
}
