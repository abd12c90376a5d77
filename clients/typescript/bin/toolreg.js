#!/usr/bin/env node
// `npx toolreg ...`: runs the toolreg binary that this package's platform dependency brought
// (or TOOLREG_BIN), with the same arguments, stdio and exit status.
import { spawnSync } from 'node:child_process';
import { resolveBinary } from '../dist/src/binary.js';

const binary = resolveBinary();
const r = spawnSync(binary, process.argv.slice(2), { stdio: 'inherit' });
if (r.error) {
  console.error(`toolreg: cannot run ${binary}: ${r.error.message}`);
  console.error('Install the package for this platform (npm installs @toolreg/cli-<platform> with toolreg-client), or set TOOLREG_BIN.');
  process.exit(1);
}
if (r.signal) process.kill(process.pid, r.signal);
process.exit(r.status ?? 1);
