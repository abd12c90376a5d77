// Where the toolreg binary is, and whether a sidecar's protocol version is one this client speaks.
//
// The npm package brings the binary the way esbuild and biome do: `toolreg-client` lists one
// package per platform in `optionalDependencies` (`@toolreg/cli-<platform>`, each with `os`,
// `cpu` and `libc` fields), npm installs the one matching the machine, and `resolveBinary` finds
// it. An explicit path or `TOOLREG_BIN` wins; with neither and no platform package, `toolreg` on
// PATH is tried last.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** The platform package's suffix for this process, e.g. `linux-x64-gnu`, `darwin-arm64`, `win32-x64`. */
export function platformPackageSuffix(platform: string = process.platform, arch: string = process.arch, musl: boolean = isMusl()): string {
  const base = `${platform}-${arch}`;
  return platform === 'linux' ? `${base}-${musl ? 'musl' : 'gnu'}` : base;
}

function isMusl(): boolean {
  if (process.platform !== 'linux') return false;
  // glibc's version is in the process report; musl's Node builds have none.
  const report = (process.report?.getReport() ?? {}) as { header?: { glibcVersionRuntime?: string } };
  return !report.header?.glibcVersionRuntime;
}

/** Every platform the npm packaging covers (only `linux-x64-gnu` is built and tested here). */
export const PLATFORM_PACKAGES = ['linux-x64-gnu', 'linux-arm64-gnu', 'darwin-x64', 'darwin-arm64', 'win32-x64'] as const;

/** The binary inside the installed platform package, or undefined when none is installed. */
export function platformBinary(suffix: string = platformPackageSuffix()): string | undefined {
  let pkgJson: string;
  try {
    pkgJson = require.resolve(`@toolreg/cli-${suffix}/package.json`);
  } catch {
    return undefined;
  }
  const exe = path.join(path.dirname(pkgJson), 'bin', suffix.startsWith('win32') ? 'toolreg.exe' : 'toolreg');
  return existsSync(exe) ? exe : undefined;
}

/** The binary to spawn: `explicit`, else env TOOLREG_BIN, else the platform package's, else `toolreg` (PATH). */
export function resolveBinary(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return explicit ?? env.TOOLREG_BIN ?? platformBinary() ?? 'toolreg';
}

/**
 * Whether a client of protocol `client` can talk to a sidecar of protocol `sidecar`
 * (both `MAJOR.MINOR`): the same major, and a sidecar minor at least the client's; under major 0
 * (before 1.0, every minor may break) the same minor.
 */
export function protocolCompatible(client: string, sidecar: string): boolean {
  const parse = (v: string) => {
    const m = /^(\d+)\.(\d+)$/.exec(v);
    return m ? [Number(m[1]), Number(m[2])] : undefined;
  };
  const c = parse(client);
  const s = parse(sidecar);
  if (!c || !s || c[0] !== s[0]) return false;
  return c[0] === 0 ? c[1] === s[1] : s[1] >= c[1];
}
