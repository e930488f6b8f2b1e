// Issue 3, queries over HTTP against a server child: Count(Intersect) requests/s with 16
// keep-alive clients at 16 shards / 10% density (Pilosa 1.4: 367 req/s, p50 2.45 ms), TopN,
// GroupBy and Sum latencies, and a small query's latency while a 256-shard query runs.
import { encodeImportValueRequest } from '../src/encoding/import-request-encode.js';
import { encodeImportRoaringRequest } from '../src/encoding/public-proto.js';
import { SHARD_WIDTH } from '../src/domain/shard.js';
import { encodePilosaRoaring } from '../src/roaring/pilosa-roaring.js';
import type { Bitmap } from '../src/roaring/bitmap.js';
import { bitmapPool, randomBitmap } from './lib/bitmaps.js';
import { HttpClient } from './lib/http-client.js';
import { closedLoop, type LoadResult } from './lib/load.js';
import { createField, createIndex, importProtobuf, importRoaring, query, type QueryJson } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { startChildServer } from './lib/server-child.js';
import { runAccessLogCost } from './access-log-cost.js';

const LOAD_MS = Number(process.env.BENCH_QUERY_MS ?? 5000);
const LATENCY_MS = 2000;
const PILOSA_14 = { reqPerSec: 367, p50Ms: 2.45 };
export const COUNT_PQL = 'Count(Intersect(Row(f=1), Row(f=2)))';

export async function runQueryHttp(r: Reporter): Promise<void> {
  r.begin('query-http', 'queries over HTTP (issue 3)');
  const server = await startChildServer({ label: 'query', fsync: 'always' });
  const setup = new HttpClient(server.url);
  try {
    await loadSmallIndex(setup);
    await setup.ok('POST', '/recalculate-caches'); // TopN reads the ranked cache, as in Pilosa
    await countLoad(r, server.url);
    for (const [name, pql] of [
      ['TopN(t, n=10)', 'TopN(t, n=10)'],
      ['GroupBy(Rows(g), Rows(f))', 'GroupBy(Rows(g), Rows(f))'],
      ['Sum(field=v)', 'Sum(field=v)'],
    ] as const) {
      const res = await latency(server.url, 'q', pql);
      r.figure(`${name} p50, 16 shards`, res.p50Ms, 'ms');
      r.figure(`${name} p99, 16 shards`, res.p99Ms, 'ms');
    }
    await loadBigIndex(setup);
    await smallDuringBig(r, server.url);
  } finally {
    setup.close();
    await server.dispose();
  }
  await runAccessLogCost(r);
}

async function countLoad(r: Reporter, url: string): Promise<void> {
  const http = new HttpClient(url, 16);
  expectAnswer(COUNT_PQL, await query(http, 'q', COUNT_PQL));
  const res = await closedLoop(16, LOAD_MS, () =>
    http.ok('POST', '/index/q/query', COUNT_PQL, 'text/plain').then(() => undefined),
  );
  http.close();
  r.figure('Count(Intersect(Row,Row)) req/s, 16 clients, 16 shards 10%', res.perSecond, 'req/s', {
    op: '>=',
    value: 5 * PILOSA_14.reqPerSec,
    source: 'issue 3: 5× Pilosa 1.4',
  });
  r.figure('  … / Pilosa 1.4 (367 req/s)', res.perSecond / PILOSA_14.reqPerSec, '×');
  r.figure('  … latency p50 (Pilosa 1.4: 2.45 ms)', res.p50Ms, 'ms');
  r.figure('  … latency p99', res.p99Ms, 'ms');
}

async function latency(url: string, index: string, pql: string, ms = LATENCY_MS): Promise<LoadResult> {
  const http = new HttpClient(url, 1);
  expectAnswer(pql, await query(http, index, pql));
  const res = await closedLoop(1, ms, () =>
    http.ok('POST', `/index/${index}/query`, pql, 'text/plain').then(() => undefined),
  );
  http.close();
  return res;
}

/** Small query latency alone, then while one client keeps the 256-shard count running. */
async function smallDuringBig(r: Reporter, url: string): Promise<void> {
  const small = 'Count(Row(f=1))';
  const bigAlone = await latency(url, 'big', COUNT_PQL, 3000);
  r.figure('256-shard 50% Count(Intersect) latency p50, alone', bigAlone.p50Ms, 'ms');
  const idle = await latency(url, 'q', small);
  r.figure(`small query ${small} p50, idle server`, idle.p50Ms, 'ms');
  r.figure(`small query p99, idle server`, idle.p99Ms, 'ms');
  const bigHttp = new HttpClient(url, 1);
  let stop = false;
  const bigLoop = (async () => {
    while (!stop) await bigHttp.ok('POST', '/index/big/query', COUNT_PQL, 'text/plain');
  })();
  await new Promise((res) => setTimeout(res, 100));
  const during = await latency(url, 'q', small, 4000);
  stop = true;
  await bigLoop;
  bigHttp.close();
  r.figure('small query p50 while the 256-shard query runs', during.p50Ms, 'ms');
  r.figure('small query p99 while the 256-shard query runs', during.p99Ms, 'ms');
  r.figure('  … p99 / 256-shard query time (≈1: waits for it whole)', during.p99Ms / bigAlone.p50Ms, '×');
}

/** A timed query must answer something real (a positive count, a non-empty list, a sum). */
function expectAnswer(pql: string, res: QueryJson): void {
  const v = res.results[0];
  const ok =
    typeof v === 'number'
      ? v > 0
      : Array.isArray(v)
        ? v.length > 0
        : typeof v === 'object' && v !== null && 'value' in v;
  if (!ok) throw new Error(`${pql} answered ${JSON.stringify(res).slice(0, 200)}`);
}

/** Index q, 16 shards: f rows 1–2 at 10%; t 50 rows (0.2%–10%) for TopN; g 10 rows; int v. */
export async function loadSmallIndex(c: HttpClient): Promise<void> {
  await createIndex(c, 'q');
  await createField(c, 'q', 'f');
  await createField(c, 'q', 't');
  await createField(c, 'q', 'g');
  await createField(c, 'q', 'v', { type: 'int', min: 0, max: 1_000_000 });
  const f = bitmapPool(0.1, 4);
  const t = new Map<number, Bitmap>(
    Array.from({ length: 50 }, (_, k) => [k, randomBitmap(0.002 * (k + 1))] as [number, Bitmap]),
  );
  const g = new Map<number, Bitmap>(Array.from({ length: 10 }, (_, k) => [k, randomBitmap(0.05)] as [number, Bitmap]));
  for (let s = 0; s < 16; s++) {
    await importRoaring(
      c,
      'q',
      'f',
      s,
      roaringBody(
        new Map([
          [1, f[s % 4]],
          [2, f[(s + 1) % 4]],
        ]),
      ),
    );
    await importRoaring(c, 'q', 't', s, roaringBody(t));
    await importRoaring(c, 'q', 'g', s, roaringBody(g));
    const cols = f[(s + 2) % 4].toUint32Array();
    const columnIds = Float64Array.from(cols, (o) => s * SHARD_WIDTH + o);
    const values = BigInt64Array.from(cols, (o) => BigInt((o * 7919) % 1_000_000));
    await importProtobuf(
      c,
      'q',
      'v',
      encodeImportValueRequest({ index: 'q', field: 'v', shard: s, columnIds, values }),
    );
  }
}

/** Index big: 256 shards, rows 1–2 of f at 50% (268M bits, built from a pool of bitmaps). */
async function loadBigIndex(c: HttpClient): Promise<void> {
  await createIndex(c, 'big');
  await createField(c, 'big', 'f');
  const pool = bitmapPool(0.5, 4);
  const bodies = pool.map((b, k) =>
    roaringBody(
      new Map([
        [1, b],
        [2, pool[(k + 1) % 4]],
      ]),
    ),
  );
  for (let s = 0; s < 256; s++) await importRoaring(c, 'big', 'f', s, bodies[s % 4]);
}

function roaringBody(rows: Map<number, Bitmap>): Uint8Array {
  return encodeImportRoaringRequest({ clear: false, views: [{ name: '', data: encodePilosaRoaring(rows) }] });
}
