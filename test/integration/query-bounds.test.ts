// Bounded queries (issue 15, defect 2) against a real server on a real socket: the GroupBy of
// three fields × 1,000 rows over 100k columns (seconds of work) is cancelled past its deadline
// (the `timeout` argument or --query-timeout) and when its client disconnects, and a /status sent
// while it runs is answered before it ends; results past --max-result-rows are a 400.
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupByFieldBody } from '../../bench/lib/group-by-data.js';
import { createServer, type Server } from '../../src/app.js';
import { DEFAULTS } from '../../src/config/config.js';
import { removeDir, tempDir, testQueryWorkers, useQueryWorkers } from '../helpers/server.js';

const GROUP_BY = 'GroupBy(Rows(a), Rows(b), Rows(c))';
const logLines: string[] = [];
let server: Server;
let dir: string;
let url: string;

function post(path: string, body: string, signal?: AbortSignal): Promise<{ status: number; body: string }> {
  return fetch(`${url}${path}`, { method: 'POST', body, signal }).then(async (r) => ({
    status: r.status,
    body: await r.text(),
  }));
}

beforeAll(async () => {
  dir = tempDir();
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (logLines.push(chunk.toString()), done()) });
  server = await createServer(
    { ...DEFAULTS, bind: '127.0.0.1:0', dataDir: dir, ...testQueryWorkers() },
    pino({ level: 'info' }, sink),
    () => undefined,
  );
  await useQueryWorkers(server);
  url = `http://127.0.0.1:${await server.listen()}`;
  await loadGroupByData(server, 100_000);
}, 60_000);

afterAll(async () => {
  // fetch's pooled keep-alive sockets would otherwise hold close() for the keep-alive timeout.
  server?.app.server.closeAllConnections();
  await server?.close();
  removeDir(dir);
});

describe('query deadline', () => {
  it('cancels a query past its timeout argument with a 400 naming the deadline', async () => {
    const r = await post('/index/g/query?timeout=20ms', GROUP_BY);
    expect(r.status).toBe(400);
    expect(JSON.parse(r.body).error).toMatch(/query timeout: the query ran past its deadline of 20 ms/);
  });

  it('accepts Go durations and refuses a malformed timeout', async () => {
    expect((await post('/index/g/query?timeout=1m30s', 'Count(Row(a=1))')).status).toBe(200);
    const bad = await post('/index/g/query?timeout=soon', 'Count(Row(a=1))');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(/invalid timeout argument/);
  });

  it('applies --query-timeout when the request names none', async () => {
    const d = tempDir();
    const s = await createServer(
      { ...DEFAULTS, bind: '127.0.0.1:0', dataDir: d, queryTimeout: 20 },
      pino({ level: 'silent' }),
      () => undefined,
    );
    try {
      await loadGroupByData(s, 100_000);
      const r = await s.app.inject({ method: 'POST', url: '/index/g/query', payload: GROUP_BY });
      expect(r.statusCode).toBe(400);
      expect(r.body).toMatch(/deadline of 20 ms/);
    } finally {
      await s.close();
      removeDir(d);
    }
  }, 60_000);
});

describe('a long GroupBy does not hold the server', () => {
  it('answers /status while the GroupBy runs, and cancels the GroupBy when its client goes', async () => {
    const ac = new AbortController();
    let groupByEnded = false;
    const groupBy = post('/index/g/query?timeout=10m', GROUP_BY, ac.signal).then(
      () => 'answered',
      () => 'aborted',
    );
    void groupBy.finally(() => (groupByEnded = true));
    // The GroupBy must have started on the server: wait for its request to be read.
    await new Promise((r) => setTimeout(r, 200));
    const status = await fetch(`${url}/status`);
    expect(status.status).toBe(200);
    const small = await post('/index/g/query', 'Count(Row(a=7))');
    expect(small.status).toBe(200);
    expect(groupByEnded).toBe(false);
    ac.abort();
    expect(await groupBy).toBe('aborted');
    // The server notices and stops the work (a finished GroupBy would log nothing).
    for (
      let i = 0;
      i < 200 && !logLines.some((l) => l.includes('query cancelled: the client closed the connection'));
      i++
    )
      await new Promise((r) => setTimeout(r, 50));
    expect(logLines.some((l) => l.includes('query cancelled: the client closed the connection'))).toBe(true);
  }, 60_000);

  it('stops a cancelled query, so the next one runs alone (a raw socket closed mid-query)', async () => {
    const before = logLines.filter((l) => l.includes('query cancelled')).length;
    await new Promise<void>((resolve) => {
      const req = request(`${url}/index/g/query?timeout=10m`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
      });
      req.on('error', () => resolve());
      req.end(GROUP_BY, () => setTimeout(() => (req.destroy(), resolve()), 200));
    });
    for (let i = 0; i < 200 && logLines.filter((l) => l.includes('query cancelled')).length === before; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(logLines.filter((l) => l.includes('query cancelled')).length).toBe(before + 1);
  }, 60_000);
});

describe('result bound (--max-result-rows 500)', () => {
  let bounded: Server;
  const d = tempDir();
  beforeAll(async () => {
    bounded = await createServer(
      { ...DEFAULTS, bind: '127.0.0.1:0', dataDir: d, maxResultRows: 500 },
      pino({ level: 'silent' }),
      () => undefined,
    );
    await loadGroupByData(bounded, 10_000);
  }, 60_000);
  afterAll(async () => {
    await bounded?.close();
    removeDir(d);
  });

  it('refuses Rows, GroupBy and TopN results past the bound with a 400 naming it', async () => {
    for (const pql of ['Rows(a)', 'GroupBy(Rows(a), Rows(b))', 'TopN(a)']) {
      const r = await bounded.app.inject({ method: 'POST', url: '/index/g/query', payload: pql });
      expect(r.statusCode, pql).toBe(400);
      expect(JSON.parse(r.body).error, pql).toMatch(/would return more than 500 rows \(max-result-rows\)/);
    }
  });

  it('answers the same calls within the bound', async () => {
    for (const pql of ['Rows(a, limit=500)', 'GroupBy(Rows(a), Rows(b), limit=100)', 'TopN(a, n=10)']) {
      const r = await bounded.app.inject({ method: 'POST', url: '/index/g/query', payload: pql });
      expect(r.statusCode, pql).toBe(200);
    }
  });
});

/** Index g, fields a, b, c: 1,000 rows each over `columns` columns of shard 0. */
async function loadGroupByData(s: Server, columns: number): Promise<void> {
  expect((await s.app.inject({ method: 'POST', url: '/index/g' })).statusCode).toBe(200);
  for (const [i, f] of ['a', 'b', 'c'].entries()) {
    expect((await s.app.inject({ method: 'POST', url: `/index/g/field/${f}` })).statusCode).toBe(200);
    const body = Buffer.from(groupByFieldBody(i, columns, 1000));
    const r = await s.app.inject({
      method: 'POST',
      url: `/index/g/field/${f}/import-roaring/0`,
      payload: body,
      headers: { 'content-type': 'application/x-protobuf' },
    });
    expect(r.statusCode).toBe(200);
  }
}
