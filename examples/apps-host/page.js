// The host page: lists the tools that have a view, calls one as the model would (through the
// host's /api/call, i.e. toolreg's `tool/invoke`), and renders its view with ext-apps' AppBridge
// in a sandboxed iframe. The view's own tool calls come back through the bridge and go to
// /api/app-call, which the host sends as `tool/invoke {..., app: {serverId}}`.
// Bundled with esbuild into dist/page.js (`npm run build`): the bridge and its dependencies come
// from node_modules, nothing from a CDN.
import { AppBridge, PostMessageTransport, buildAllowAttribute } from '@modelcontextprotocol/ext-apps/app-bridge';

const HOST_INFO = { name: 'toolreg-apps-host', version: '0.1.0' };

async function api(path, body) {
  const res = await fetch(path, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (!res.ok) throw new Error(json.error ?? `${path}: HTTP ${res.status}`);
  return json;
}

/** A CSP for the view from its `_meta.ui.csp`: nothing beyond the domains it declares. */
function viewCsp(csp = {}) {
  const list = (domains, none = "'none'") => (domains?.length ? domains.join(' ') : none);
  const res = (csp.resourceDomains ?? []).join(' ');
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${res}`,
    `style-src 'unsafe-inline' ${res}`,
    `img-src data: ${res}`,
    `font-src data: ${res}`,
    `media-src data: ${res}`,
    `connect-src ${list(csp.connectDomains)}`,
    `frame-src ${list(csp.frameDomains)}`,
    `base-uri ${list(csp.baseUriDomains)}`,
  ].join('; ');
}

/** The view's HTML with its CSP as the first thing in <head>, so it covers every script. */
function withCsp(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${viewCsp(csp).replace(/"/g, '&quot;')}">`;
  return /<head[^>]*>/i.test(html) ? html.replace(/<head[^>]*>/i, (m) => m + meta) : meta + html;
}

function log(line) {
  const li = document.createElement('li');
  li.textContent = line;
  document.getElementById('log').append(li);
}

let current = null; // the view on screen: {bridge, iframe}

async function render(tool, args, result) {
  if (current) {
    await current.bridge.teardownResource({}).catch(() => {});
    current.iframe.remove();
  }
  const { serverId, resourceUri } = result.ui;
  const view = await api('/api/view', { serverId, uri: resourceUri });
  const iframe = document.createElement('iframe');
  // No allow-same-origin: the view runs in an opaque origin, apart from this page and its API.
  iframe.setAttribute('sandbox', 'allow-scripts');
  iframe.setAttribute('allow', buildAllowAttribute(view.ui?.permissions));
  iframe.id = 'view';
  iframe.title = `${tool.toolName} view`;
  document.getElementById('views').append(iframe);

  const bridge = new AppBridge(null, HOST_INFO, { serverTools: {}, logging: {} }, {
    hostContext: { theme: 'light', displayMode: 'inline', availableDisplayModes: ['inline'] },
  });
  bridge.oncalltool = async (params) => {
    log(`view -> ${params.name}`);
    return api('/api/app-call', { serverId, name: params.name, arguments: params.arguments ?? {} });
  };
  bridge.onloggingmessage = (p) => log(`view log: ${JSON.stringify(p.data)}`);
  bridge.oninitialized = () => {
    void bridge.sendToolInput({ arguments: args });
    void bridge.sendToolResult(result.raw);
  };
  // The transport listens for messages whose source is this iframe's window, which stays the
  // same object when srcdoc loads: connect first, then load, so ui/initialize is not missed.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = withCsp(view.html, view.ui?.csp);
  current = { bridge, iframe };
}

async function call(tool) {
  const args = {};
  const result = await api('/api/call', { name: tool.name, arguments: args });
  document.getElementById('result').textContent = JSON.stringify(result.output);
  if (result.ui) await render(tool, args, result);
}

const tools = await api('/api/tools');
for (const tool of tools.filter((t) => t.ui?.resourceUri && (t.ui.visibility ?? ['model']).includes('model'))) {
  const button = document.createElement('button');
  button.id = `call-${tool.toolName}`;
  button.textContent = `${tool.toolName} (${tool.serverId})`;
  button.onclick = () => call(tool).catch((e) => log(`error: ${e.message}`));
  document.getElementById('tools').append(button);
}
document.body.dataset.ready = 'true';
