// The web console in a real headless Chromium (Debian's `chromium`, driven by playwright-core):
// create an index and a field through the console's forms, write bits and run queries in its
// PQL box, and see the result tables, the TopN and GroupBy bar charts, the history and the status
// panel. A screenshot is left in test-artifacts/ for people to look at. Skips only when no
// Chromium binary is installed (.ci/run installs one).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startServer, stopServer, type TestServer } from '../helpers/server.js';

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'];
const executablePath = CANDIDATES.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
const ARTIFACTS = path.resolve('test-artifacts');

describe.skipIf(executablePath === undefined)('web console in headless Chromium', () => {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let url: string;
  // Anything the page logs as an error (a failed script, a CSP violation, an uncaught exception).
  const pageErrors: string[] = [];

  beforeAll(async () => {
    server = await startServer();
    url = `http://127.0.0.1:${await server.listen()}/`;
    browser = await chromium.launch({
      executablePath,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', (err) => pageErrors.push(`pageerror: ${err.message}`));
    page.on('console', (msg) => {
      // A 404 from an optional route (/ready, /internal/history, /kafka/*) is the expected way to learn it is absent.
      if (msg.type() === 'error' && !msg.text().includes('404')) pageErrors.push(`console: ${msg.text()}`);
    });
    page.on('dialog', (d) => void d.accept());
  });

  let serverClosed = false;

  afterAll(async () => {
    await browser?.close();
    if (serverClosed && server !== undefined) removeDir(server.dataDir);
    else await stopServer(server);
  });

  async function runQuery(pql: string): Promise<void> {
    await page.fill('#pql', pql);
    await page.click('#run');
    // The timing reads "running…" from the click until the answer is rendered.
    await page
      .locator('#query-timing')
      .filter({ hasText: /results? in [\d.]+ ms$/ })
      .waitFor();
  }

  it('creates an index and a field from the schema panel', async () => {
    await page.goto(url);
    await expect(page.title()).resolves.toBe('bitledger console');
    await page.waitForSelector('#schema-tree .empty');

    await page.click('#create-index summary');
    await page.fill('#index-form input[name=name]', 'people');
    await page.click('#index-form button[type=submit]');
    await page.waitForSelector('details.index[data-index=people]');

    await page.click('#create-field summary');
    await page.selectOption('#field-form select[name=index]', 'people');
    await page.fill('#field-form input[name=name]', 'country');
    await page.click('#field-form button[type=submit]');
    await page.waitForSelector('details.index[data-index=people] .field-name:text-is("country")');

    await page.fill('#field-form input[name=name]', 'age');
    // Options show for the types that have them.
    expect(await page.isVisible('#field-form input[name=max]')).toBe(false);
    await page.selectOption('#field-form select[name=type]', 'int');
    expect(await page.isVisible('#field-form input[name=timeQuantum]')).toBe(false);
    await page.fill('#field-form input[name=max]', '120');
    await page.click('#field-form button[type=submit]');
    await page.waitForSelector('details.index[data-index=people] .field-name:text-is("age")');
    expect(await page.textContent('details.index[data-index=people]')).toContain('max: 120');

    // The server really has them: the console went through the Pilosa endpoints.
    const schema = (await (await fetch(`${url}schema`)).json()) as {
      indexes: { name: string; fields: { name: string; options: { type: string } }[] }[];
    };
    const people = schema.indexes.find((i) => i.name === 'people');
    expect(people?.fields.map((f) => `${f.name}:${f.options.type}`).sort()).toEqual(['age:int', 'country:set']);
    expect(await page.inputValue('#query-index')).toBe('people');
  });

  it('writes bits and shows a Count as a figure', async () => {
    const sets = [
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 1],
      [5, 2],
      [6, 2],
      [7, 3],
      [1048577, 1],
    ].map(([col, row]) => `Set(${col}, country=${row})`);
    await runQuery(`${sets.join(' ')} Set(1, age=30) Set(5, age=41)`);
    expect(await page.locator('#results article.result').count()).toBe(10);
    await runQuery('Count(Row(country=1))');
    expect(await page.textContent('#results article[data-call=Count] .figure')).toBe('5');
    await runQuery('Row(country=1)');
    expect(await page.locator('#results article[data-call=Row] .columns li').allTextContents()).toEqual([
      '1',
      '2',
      '3',
      '4',
      '1048577',
    ]);
  });

  it('shows TopN as a table and a bar chart', async () => {
    await runQuery('TopN(country, n=5)');
    const result = page.locator('#results article[data-call=TopN]');
    const cells = await result
      .locator('tbody tr')
      .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    expect(cells).toEqual([
      ['1', '5'],
      ['2', '2'],
      ['3', '1'],
    ]);
    const bars = result.locator('svg.chart rect');
    expect(await bars.count()).toBe(3);
    const widths = await bars.evaluateAll((rects) => rects.map((r) => Number(r.getAttribute('width'))));
    // Bars are proportional to the counts: the largest row has the longest bar.
    expect(widths[0]).toBeGreaterThan(widths[1]);
    expect(widths[1]).toBeGreaterThan(widths[2]);
    expect(await result.locator('svg.chart').getAttribute('aria-label')).toContain('1: 5');
  });

  it('shows GroupBy as a table and a bar chart', async () => {
    await runQuery('GroupBy(Rows(country))');
    const result = page.locator('#results article[data-call=GroupBy]');
    expect(await result.locator('thead th').allTextContents()).toEqual(['country', 'count']);
    expect(await result.locator('svg.chart rect').count()).toBe(3);
    expect(await result.locator('svg.chart .bar-label').allTextContents()).toEqual([
      'country=1',
      'country=2',
      'country=3',
    ]);
    await page.locator('#results').screenshot({ path: path.join(ARTIFACTS, 'console-groupby.png') });
  });

  it('reports a bad query as an error without losing the page', async () => {
    await page.fill('#pql', 'Count(Row(nosuchfield=1))');
    await page.click('#run');
    const err = page.locator('#results .error');
    await err.waitFor();
    expect(await err.textContent()).toMatch(/^404: .*field not found/);
  });

  it('keeps the query history across a reload', async () => {
    await page.reload();
    await page.click('#history-box summary');
    const items = await page.locator('#history code').allTextContents();
    expect(items.slice(0, 4)).toEqual([
      'GroupBy(Rows(country))',
      'TopN(country, n=5)',
      'Row(country=1)',
      'Count(Row(country=1))',
    ]);
    await page.click('#history li:nth-child(2) button');
    expect(await page.inputValue('#pql')).toBe('TopN(country, n=5)');
    await runQuery(await page.inputValue('#pql'));
    expect(await page.locator('#results svg.chart rect').count()).toBe(3);
  });

  it('shows keys, not IDs, for keyed indexes and fields', async () => {
    for (const [u, body] of [
      ['index/tastes', '{"options":{"keys":true}}'],
      ['index/tastes/field/likes', '{"options":{"keys":true}}'],
    ]) {
      expect((await fetch(`${url}${u}`, { method: 'POST', body })).status).toBe(200);
    }
    await page.click('#schema-refresh');
    await page.waitForSelector('details.index[data-index=tastes]');
    await page.click('details.index[data-index=tastes] button:text-is("query")');
    expect(await page.inputValue('#query-index')).toBe('tastes');
    expect(await page.inputValue('#pql')).toBe('TopN(likes, n=10)');
    await runQuery('Set("ann", likes="tea") Set("bob", likes="tea") Set("cy", likes="coffee")');
    await runQuery('TopN(likes, n=10)');
    const result = page.locator('#results article[data-call=TopN]');
    expect(await result.locator('thead th').allTextContents()).toEqual(['key', 'row', 'count']);
    expect(await result.locator('svg.chart .bar-label').allTextContents()).toEqual(['tea', 'coffee']);
    await runQuery('Row(likes="tea")');
    expect(await page.locator('#results .columns li').allTextContents()).toEqual(['ann', 'bob']);
    await page.selectOption('#query-index', 'people');
  });

  it('shows node state and durability figures in the status panel', async () => {
    const state = (await (await fetch(`${url}internal/state`)).json()) as { sequence: { applied: number } };
    expect(state.sequence.applied).toBeGreaterThan(0);
    const card = (title: string) => page.locator(`#status-body section.card[aria-label="${title}"]`);
    await card('Durability').waitFor();
    // The panel refreshes every few seconds; wait for the figures of the writes above.
    const seq = state.sequence.applied.toLocaleString('en-US');
    await card('Durability')
      .locator('dl')
      .filter({ hasText: new RegExp(`sequence${seq}durable${seq}`) })
      .waitFor();
    const durability = await card('Durability').textContent();
    expect(durability).toContain('fsyncalways');
    expect(await card('Node').textContent()).toContain('NORMAL');
    expect(await card('Last snapshot').textContent()).toMatch(/snapshotnone yetrecords since\d/);
    if (server === undefined) throw new Error('server did not start');
    const snapSeq = await server.engine.snapshot();
    await card('Last snapshot')
      .locator('dl')
      .filter({ hasText: new RegExp(`sequence${snapSeq}written\\d+ s ago`) })
      .waitFor();
    expect(await card('Last snapshot').textContent()).toContain('records since0');
    expect(await page.textContent('#node-summary')).toContain('NORMAL');

    // The screenshot shows a chart beside the status panel.
    await runQuery('GroupBy(Rows(country))');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'console.png'), fullPage: true });
    expect(existsSync(path.join(ARTIFACTS, 'console.png'))).toBe(true);
    // The same page in the dark scheme and on a phone-sized screen, for people to look at.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: path.join(ARTIFACTS, 'console-dark.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 420, height: 900 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'console-narrow.png'), fullPage: true });
    await page.setViewportSize({ width: 1400, height: 900 });
    expect(pageErrors).toEqual([]);
  });

  it('deletes an index from the schema panel after confirmation', async () => {
    await page.click('details.index[data-index=people] button:text-is("delete index")');
    await page.waitForSelector('details.index[data-index=people]', { state: 'detached' });
    expect(await page.locator('details.index').count()).toBe(1);
    expect(await page.textContent('#schema-message')).toBe('Deleted index people.');
    const schema = (await (await fetch(`${url}schema`)).json()) as { indexes: { name: string }[] };
    expect(schema.indexes.map((i) => i.name)).toEqual(['tastes']);
    expect(pageErrors).toEqual([]);
  });

  it('says the server is unreachable when it goes away, without breaking the page', async () => {
    if (server === undefined) throw new Error('server did not start');
    await server.close();
    serverClosed = true;
    await page.locator('#status-body section[aria-label=Node] .badge').filter({ hasText: 'unreachable' }).waitFor();
    expect(await page.textContent('#node-summary')).toContain('server unreachable');
    expect(pageErrors.filter((e) => !e.includes('Failed to load resource'))).toEqual([]);
  });
});
