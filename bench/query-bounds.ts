// Issue 15, defect 2: the server stays responsive while one heavy request runs. A loop of
// /status and a small query measures latency (p50/p99, target p99 ≤ 100 ms) while (a) the
// GroupBy(Rows(a), Rows(b), Rows(c)) of one shard of 100k columns × 1,000 rows per field runs,
// capped by its deadline, and (b) a 100 MB protobuf import is decoded and applied.
import { encodeImportRequest } from '../src/encoding/import-request-encode.js';
import { groupByFieldBody } from './lib/group-by-data.js';
import { HttpClient } from './lib/http-client.js';
import { createField, createIndex, importRoaring, query } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { startChildServer } from './lib/server-child.js';
import { now, percentile } from './lib/stats.js';

const GROUP_BY_TIMEOUT = '20s';
const IMPORT_BYTES = 100 * 1024 * 1024;
const TARGET = { op: '<=' as const, value: 100, source: 'issue 15: p99 ≤ 100 ms beside any one request' };

export async function runQueryBounds(r: Reporter): Promise<void> {
  r.begin('query-bounds', 'responsiveness beside a long GroupBy and a 100 MB import (issue 15)');
  const server = await startChildServer({ label: 'bounds', fsync: 'always' });
  const setup = new HttpClient(server.url);
  try {
    await createIndex(setup, 'g');
    for (const [i, f] of ['a', 'b', 'c'].entries()) {
      await createField(setup, 'g', f);
      await importRoaring(setup, 'g', f, 0, groupByFieldBody(i, 100_000, 1000));
    }
    await createIndex(setup, 'q');
    await createField(setup, 'q', 'f');
    await query(setup, 'q', 'Set(1, f=1) Set(2, f=1)');

    const heavy = new HttpClient(server.url);
    const gb = await beside(server.url, async () => {
      const res = await heavy.send(
        'POST',
        `/index/g/query?timeout=${GROUP_BY_TIMEOUT}`,
        'GroupBy(Rows(a), Rows(b), Rows(c))',
        'text/plain',
      );
      return res.status === 200 ? 'finished' : `answered ${res.status}: ${res.body.toString('utf8', 0, 80)}`;
    });
    r.note(
      `GroupBy(Rows(a), Rows(b), Rows(c)), 100k columns × 1,000 rows per field, timeout=${GROUP_BY_TIMEOUT}: ${gb.outcome} after ${(gb.ms / 1000).toFixed(1)} s`,
    );
    report(r, 'GroupBy', gb);

    const body = importBody(IMPORT_BYTES);
    const imp = await beside(server.url, async () => {
      const res = await heavy.send('POST', '/index/q/field/f/import', body, 'application/x-protobuf');
      if (res.status !== 200) throw new Error(`import answered ${res.status}: ${res.body.toString('utf8', 0, 200)}`);
      return 'imported';
    });
    r.note(
      `import of ${(body.byteLength / 1048576).toFixed(0)} MB (protobuf ImportRequest, one shard): ${(imp.ms / 1000).toFixed(2)} s`,
    );
    report(r, '100 MB import', imp);
    heavy.close();
  } finally {
    setup.close();
    await server.dispose();
  }
}

interface Beside {
  outcome: string;
  ms: number;
  status: number[];
  small: number[];
}

/** Runs `heavy` once while a loop alternates GET /status and a small query, timing each. */
async function beside(url: string, heavy: () => Promise<string>): Promise<Beside> {
  const probe = new HttpClient(url);
  const status: number[] = [];
  const small: number[] = [];
  let done = false;
  const t0 = now();
  const work = heavy().finally(() => (done = true));
  const loop = (async () => {
    while (!done) {
      let t = now();
      await probe.ok('GET', '/status');
      status.push(now() - t);
      t = now();
      await probe.ok('POST', '/index/q/query', 'Count(Row(f=1))', 'text/plain');
      small.push(now() - t);
    }
  })();
  const outcome = await work;
  const ms = now() - t0;
  await loop;
  probe.close();
  return { outcome, ms, status, small };
}

function report(r: Reporter, what: string, b: Beside): void {
  r.figure(`/status p50 during the ${what}`, percentile(b.status, 50), 'ms');
  r.figure(`/status p99 during the ${what} (${b.status.length} requests)`, percentile(b.status, 99), 'ms', TARGET);
  r.figure(`Count(Row) p50 during the ${what}`, percentile(b.small, 50), 'ms');
  r.figure(`Count(Row) p99 during the ${what} (${b.small.length} requests)`, percentile(b.small, 99), 'ms', TARGET);
}

/** An ImportRequest of about `bytes` for shard 0 of index q, field f: rows 0–999, random columns. */
function importBody(bytes: number): Uint8Array {
  // Row IDs take 1–2 bytes and columns 3, so a bit costs about 5 bytes.
  const n = Math.floor(bytes / 5);
  const rowIds = new Float64Array(n);
  const columnIds = new Float64Array(n);
  let x = 0x2545f491;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    rowIds[i] = i % 1000;
    columnIds[i] = (x >>> 0) & 0xfffff;
  }
  return encodeImportRequest({ index: 'q', field: 'f', shard: 0, rowIds, columnIds });
}
