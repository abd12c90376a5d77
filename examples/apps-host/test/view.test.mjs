// The example host in a real browser: headless Chromium (Debian's `chromium`, driven by
// puppeteer-core, which downloads no browser) loads the page, calls a tool, and the view that
// toolreg served shows the tool's answer; the system monitor's view calls its app-only tool
// `poll-system-stats`, which reaches the server through the host and toolreg.
// Needs the sidecar at $TOOLREG_BIN (default ../../target/release/toolreg) and chromium at
// $CHROMIUM (default /usr/bin/chromium); either missing fails the test, never skips it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';
import { exampleServers, startHost } from '../host.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const BIN = path.resolve(here, '..', process.env.TOOLREG_BIN ?? '../../target/release/toolreg');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

/** The frame of `tool`'s view (page.js titles the iframe after the tool), once `selector` is in it. */
async function viewFrame(page, tool, selector) {
  const handle = await page.waitForSelector(`iframe#view[title="${tool} view"]`);
  const frame = await handle.contentFrame();
  await frame.waitForSelector(selector);
  return frame;
}

describe('apps host in headless Chromium', () => {
  let host;
  let browser;
  let page;

  before(async () => {
    assert.ok(fs.existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM`);
    assert.ok(fs.existsSync(BIN), `no toolreg binary at ${BIN}: build it or set TOOLREG_BIN`);
    host = await startHost({ servers: exampleServers(), binaryPath: BIN });
    browser = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
    page = await browser.newPage();
    // The view's and the page's errors, in the test's output when something fails.
    page.on('console', (m) => m.type() === 'error' && console.error(`browser: ${m.text()}`));
    await page.goto(host.url);
    await page.waitForSelector('body[data-ready="true"]');
  });

  after(async () => {
    await browser?.close();
    await host?.close();
  });

  it('lists the view tools for the model and not the app-only one', async () => {
    const buttons = await page.$$eval('#tools button', (bs) => bs.map((b) => b.id));
    assert.deepEqual(buttons.sort(), ['call-get-system-info', 'call-get-time']);
  });

  it('renders get-time\'s view, which shows the time the tool returned', async () => {
    const [response] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/api/call')), page.click('#call-get-time')]);
    const result = await response.json();
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.deepEqual(result.ui, { serverId: 'basic', resourceUri: 'ui://get-time/mcp-app.html' });
    const time = result.raw.structuredContent.time;
    assert.match(time, /^\d{4}-\d\d-\d\dT/);
    const frame = await viewFrame(page, 'get-time', '#server-time');
    await frame.waitForFunction((t) => document.getElementById('server-time').textContent === t, {}, time);
    // The view runs sandboxed: an opaque origin, not the host page's.
    assert.equal(await frame.evaluate(() => window.origin), 'null');
  });

  it('renders the system monitor, whose view calls the app-only poll-system-stats through the host', async () => {
    await page.click('#call-get-system-info');
    const frame = await viewFrame(page, 'get-system-info', '#info-hostname');
    await frame.waitForFunction((h) => document.getElementById('info-hostname').textContent === h, {}, os.hostname());
    // The view polls at once after the tool result: its answer fills the memory gauge.
    await frame.waitForFunction(() => /^\d+(\.\d+)?%$/.test(document.getElementById('memory-percent').textContent));
    const polls = host.forwarded.filter((f) => f.name === 'poll-system-stats');
    assert.ok(polls.length > 0, JSON.stringify(host.forwarded));
    assert.deepEqual(polls[0], { serverId: 'monitor', name: 'poll-system-stats', isError: false });
  });

  it('the app-only tool is refused to a model call (by toolreg) and to another server\'s view (by the host)', async () => {
    const api = (p, body) => page.evaluate(async (p, body) => (await fetch(p, { method: 'POST', body: JSON.stringify(body) })).json(), p, body);
    const tools = await page.evaluate(async () => (await fetch('/api/tools')).json());
    const poll = tools.find((t) => t.toolName === 'poll-system-stats');
    assert.deepEqual(poll.ui.visibility, ['app']);
    const asModel = await api('/api/call', { name: poll.name, arguments: {} });
    assert.equal(asModel.isError, true);
    assert.match(asModel.output.value, /view only/);
    // toolreg refuses that too (a view reaches its own server only): the client tests show it.
    const fromOtherView = await api('/api/app-call', { serverId: 'basic', name: 'poll-system-stats', arguments: {} });
    assert.equal(fromOtherView.isError, true);
    assert.deepEqual(host.forwarded.at(-1), { serverId: 'basic', name: 'poll-system-stats', isError: true, refusedBy: 'host' });
  });
});
