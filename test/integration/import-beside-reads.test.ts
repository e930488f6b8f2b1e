// A large import does not hold reads back (issue 15, defect 2), and is never seen before it is
// durable. The server holds every log append back (the commit queue's pauseBeforeBatchMs hook), so a
// test can act while the import is staged but not yet durable; it checks ordering, not timing:
// /status, a query of another index and a query of the same field are all answered while the
// import is still not durable, the same-field query without the import's bits, and a write sent
// meanwhile decides after the import (log order = apply order, so a restart gives the same state).
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from '../../src/app.js';
import { DEFAULTS } from '../../src/config/config.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { stateDigest } from '../../src/state/digest.js';
import { removeDir, tempDir } from '../helpers/server.js';

const PAIRS = 2_500_000;
const ROWS = 100;
let dir: string;
let server: Server;
let url: string;

async function open(holdAppendsMs?: number): Promise<Server> {
  return createServer({ ...DEFAULTS, bind: '127.0.0.1:0', dataDir: dir }, pino({ level: 'silent' }), () => {}, {
    commitTestHooks: holdAppendsMs === undefined ? {} : { pauseBeforeBatchMs: holdAppendsMs },
  });
}

async function post(
  path: string,
  body: string | Uint8Array,
  type = 'text/plain',
): Promise<{ status: number; body: string }> {
  const r = await fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': type } });
  return { status: r.status, body: await r.text() };
}

async function count(index: string, pql: string): Promise<number> {
  const r = await post(`/index/${index}/query`, `Count(${pql})`);
  expect(r.status).toBe(200);
  return JSON.parse(r.body).results[0];
}

/** Pairs (i % ROWS, random column of shard 0), seeded by `seed`. */
function importData(seed: number): { body: Uint8Array; rowIds: Float64Array; columnIds: Float64Array } {
  const rowIds = new Float64Array(PAIRS);
  const columnIds = new Float64Array(PAIRS);
  let x = seed;
  for (let i = 0; i < PAIRS; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    rowIds[i] = i % ROWS;
    columnIds[i] = (x >>> 0) & 0xfffff;
  }
  return { body: encodeImportRequest({ index: 'q', field: 'f', shard: 0, rowIds, columnIds }), rowIds, columnIds };
}

function columnsOfRow(d: { rowIds: Float64Array; columnIds: Float64Array }, row: number): Set<number> {
  const out = new Set<number>();
  for (let i = 0; i < d.rowIds.length; i++) if (d.rowIds[i] === row) out.add(d.columnIds[i]);
  return out;
}

/** Starts the import and resolves once its events are staged (assigned) but not durable. */
async function startImport(body: Uint8Array): Promise<{ done: Promise<number>; acked: () => boolean }> {
  const before = server.engine.logFigures().assignedSeq;
  let acked = false;
  const done = post('/index/q/field/f/import', body, 'application/x-protobuf').then((r) => {
    acked = true;
    return r.status;
  });
  for (let i = 0; i < 6000 && server.engine.logFigures().assignedSeq === before; i++)
    await new Promise((r) => setTimeout(r, 10));
  const figures = server.engine.logFigures();
  expect(figures.assignedSeq).toBeGreaterThan(before);
  expect(figures.durableSeq).toBeLessThan(figures.assignedSeq);
  return { done, acked: () => acked };
}

const notDurableYet = (): boolean => server.engine.logFigures().durableSeq < server.engine.logFigures().assignedSeq;

beforeAll(async () => {
  dir = tempDir();
  // Set up without the hook, then reopen with every append held back for 3 s.
  const setup = await open();
  for (const [method, path] of [
    ['POST', '/index/q'],
    ['POST', '/index/q/field/f'],
    ['POST', '/index/other'],
    ['POST', '/index/other/field/g'],
  ])
    expect((await setup.app.inject({ method: method as 'POST', url: path, payload: '{}' })).statusCode).toBe(200);
  await setup.app.inject({ method: 'POST', url: '/index/other/query', payload: 'Set(1, g=1)' });
  await setup.app.inject({ method: 'POST', url: '/index/q/query', payload: 'Set(5, f=1)' });
  await setup.close();
  server = await open(3000);
  url = `http://127.0.0.1:${await server.listen()}`;
}, 60_000);

afterAll(async () => {
  server?.app.server.closeAllConnections();
  await server?.close();
  removeDir(dir);
});

describe('a large import beside reads', () => {
  it('answers /status and queries while the import is staged, and shows its bits only once durable', async () => {
    const data = importData(0x2545f491);
    const row1 = columnsOfRow(data, 1).add(5);
    const imp = await startImport(data.body);

    expect((await fetch(`${url}/status`)).status).toBe(200);
    expect(await count('other', 'Row(g=1)')).toBe(1);
    // The same field answers from the state before the import: only the bit set earlier.
    expect(await count('q', 'Row(f=1)')).toBe(1);
    expect(imp.acked()).toBe(false);
    expect(notDurableYet()).toBe(true);

    expect(await imp.done).toBe(200);
    expect(await count('q', 'Row(f=1)')).toBe(row1.size);
  }, 60_000);

  it('decides a write sent while an import is staged after the import, as replay will', async () => {
    const data = importData(0x1234567);
    const col = data.columnIds[2]; // a bit of row 2 that only this import sets
    const imp = await startImport(data.body);
    // Clear() decides against the state: it must find the import's bit set (log order).
    const cleared = post('/index/q/query', `Clear(${col}, f=2)`);
    const other = post('/index/other/query', 'Set(2, g=1)');
    expect(await imp.done).toBe(200);
    const c = await cleared;
    expect(c.status).toBe(200);
    expect(JSON.parse(c.body).results).toEqual([true]);
    expect((await other).status).toBe(200);
    const row2 = await post('/index/q/query', 'Row(f=2)');
    expect(JSON.parse(row2.body).results[0].columns).not.toContain(col);

    const live = server.engine.peekApplied(stateDigest);
    server.app.server.closeAllConnections();
    await server.close();
    server = await open();
    url = `http://127.0.0.1:${await server.listen()}`;
    expect(server.engine.peekApplied(stateDigest)).toBe(live);
  }, 60_000);
});
