// Runs the example host with the two ext-apps example servers: `npm start`, then open the URL.
// The sidecar binary: env TOOLREG_BIN, else the toolreg-client package's own resolution.
import { exampleServers, startHost } from './host.mjs';

const host = await startHost({ servers: exampleServers(), port: Number(process.env.PORT ?? 8080), binaryPath: process.env.TOOLREG_BIN });
console.log(`apps host on ${host.url}`);
process.on('SIGINT', () => host.close().then(() => process.exit(0)));
