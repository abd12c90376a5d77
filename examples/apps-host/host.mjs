// The example host: spawns `toolreg serve` with the TypeScript client, declaring that it renders
// MCP Apps views, hands it the MCP servers, and serves the page (page.html + the bundled
// dist/page.js) and the small JSON API the page uses. Plain node:http, no framework.
//
//   GET  /api/tools     the registry's MCP tools with their `ui` (after registry/syncMcp)
//   POST /api/call      {name, arguments}: tool/invoke as the model would call it
//   POST /api/view      {serverId, uri}: catalog/readResource of a view -> {html, ui}
//   POST /api/app-call  {serverId, name, arguments}: a view's tools/call -> tool/invoke with app
//   GET  /api/forwarded the view calls forwarded so far (what the browser test reads)
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolregClient } from 'toolreg-client';

const here = path.dirname(fileURLToPath(import.meta.url));
export const VIEW_MIME = 'text/html;profile=mcp-app';

/** Waits until every server has a tool list (catalog/listTools answers from the cache only). */
async function ready(toolreg, servers, ms = 30000) {
  const end = Date.now() + ms;
  for (const { id } of servers) {
    for (;;) {
      const list = await toolreg.catalogListTools({ serverId: id });
      if (list.state === 'ready') break;
      if (Date.now() > end) throw new Error(`MCP server ${id} not ready: ${JSON.stringify(list)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * Starts the host. `servers`: catalog/setServers entries. `port` 0 picks a free one.
 * Returns {url, forwarded, close}; `forwarded` lists the view calls sent to toolreg.
 */
export async function startHost({ servers, port = 0, binaryPath, onStderr }) {
  const toolreg = await ToolregClient.spawn({
    binaryPath,
    capabilities: { apps: { mimeTypes: [VIEW_MIME] } },
    localModel: false,
    onStderr,
  });
  await toolreg.catalogSetServers({ servers });
  await ready(toolreg, servers);
  await toolreg.registrySyncMcp({});
  const { entries } = await toolreg.registryList({});
  const tools = entries
    .filter((e) => e.source?.kind === 'mcp')
    .map((e) => ({ name: e.name, serverId: e.source.serverId, toolName: e.source.toolName, ui: e.ui ?? null }));
  const forwarded = [];

  // A view names its server's tools as the server does; the registry knows them by wire name.
  const wireName = (serverId, toolName) => tools.find((t) => t.serverId === serverId && t.toolName === toolName)?.name;

  const routes = {
    'GET /api/tools': async () => tools,
    'POST /api/call': async ({ name, arguments: args }) => toolreg.toolInvoke({ name, arguments: args ?? {} }),
    'POST /api/view': async ({ serverId, uri }) => {
      const { contents } = await toolreg.catalogReadResource({ serverId, uri });
      const view = contents.find((c) => c.uri === uri) ?? contents[0];
      if (!view?.mimeType?.startsWith(VIEW_MIME)) throw new Error(`${uri} is not an MCP Apps view (${view?.mimeType})`);
      const html = view.text ?? Buffer.from(view.blob ?? '', 'base64').toString('utf8');
      // The view's csp and permissions, passed on unchanged for the page to apply.
      return { html, ui: view._meta?.ui ?? null };
    },
    'POST /api/app-call': async ({ serverId, name, arguments: args }) => {
      const wire = wireName(serverId, name);
      if (!wire) {
        forwarded.push({ serverId, name, isError: true, refusedBy: 'host' });
        return { content: [{ type: 'text', text: `${name} is not a tool of ${serverId}` }], isError: true };
      }
      // toolreg checks the rest: the tool's visibility must have "app" (app-only ones included).
      const r = await toolreg.toolInvoke({ name: wire, arguments: args ?? {}, app: { serverId } });
      forwarded.push({ serverId, name, isError: r.isError });
      if (r.raw && !r.isError) return r.raw;
      return r.raw ?? { content: [{ type: 'text', text: String(r.output.value) }], isError: true };
    },
    'GET /api/forwarded': async () => forwarded,
  };

  const files = {
    '/': ['page.html', 'text/html; charset=utf-8'],
    '/page.js': ['dist/page.js', 'text/javascript; charset=utf-8'],
  };

  const server = http.createServer(async (req, res) => {
    const send = (status, type, body) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    try {
      if (req.url === '/favicon.ico') return send(204, 'text/plain', '');
      const file = req.method === 'GET' && files[req.url];
      if (file) return send(200, file[1], fs.readFileSync(path.join(here, file[0])));
      const route = routes[`${req.method} ${req.url}`];
      if (!route) return send(404, 'application/json', JSON.stringify({ error: 'not found' }));
      let body = '';
      for await (const chunk of req) body += chunk;
      const out = await route(body ? JSON.parse(body) : {});
      send(200, 'application/json', JSON.stringify(out));
    } catch (e) {
      send(500, 'application/json', JSON.stringify({ error: e instanceof Error ? e.message : String(e) }));
    }
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  return {
    url,
    forwarded,
    async close() {
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeAllConnections(); // the browser's keep-alive connections would hold close()
      await closed;
      await toolreg.close();
    },
  };
}

/** The two ext-apps example servers from npm, as catalog/setServers entries. */
export function exampleServers() {
  const dist = (pkg) => path.join(here, 'node_modules/@modelcontextprotocol', pkg, 'dist/index.js');
  return [
    { id: 'basic', name: 'Basic', enabled: true, transport: { type: 'stdio', command: process.execPath, args: [dist('server-basic-vanillajs'), '--stdio'] } },
    { id: 'monitor', name: 'System Monitor', enabled: true, transport: { type: 'stdio', command: process.execPath, args: [dist('server-system-monitor'), '--stdio'] } },
  ];
}
