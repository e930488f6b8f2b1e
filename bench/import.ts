// Issue 4, import: durable (fsync always) protobuf import and import-roaring over HTTP, bits/s as
// the wall time of the requests (sent one after another), client encode time apart, exact log
// bytes per bit, and the same log records written to raw classic-level in as many synced batches,
// in the same run. Pilosa 1.4 imported 1.8M bits/s on its benchmark. Each case gets a fresh server,
// warmed up on another index first (its records are left out of every figure).
// BENCH_IMPORT_ONLY=text runs only the cases whose label contains it.
import { encodeImportRequest } from '../src/encoding/import-request-encode.js';
import { encodeImportRoaringRequest } from '../src/encoding/public-proto.js';
import { encodePilosaRoaring } from '../src/roaring/pilosa-roaring.js';
import { SHARD_WIDTH } from '../src/domain/shard.js';
import { EXISTS_FIELD } from '../src/domain/names.js';
import { RoaringBitmap32, type Bitmap } from '../src/roaring/bitmap.js';
import { HttpClient } from './lib/http-client.js';
import { importChunks, type Chunk, type ImportShape } from './lib/import-data.js';
import { dirBytes, indexBytes, readLog, type LogContents, type LogRecordBytes } from './lib/log-bytes.js';
import { importProtobuf, importRoaring, createField, createIndex } from './lib/pilosa.js';
import { openRaw, rawWriteBatches } from './lib/raw-level.js';
import type { Reporter, Target } from './lib/report.js';
import { removeDir, startChildServer, tempDir } from './lib/server-child.js';
import { MB, now } from './lib/stats.js';

type Kind = 'protobuf' | 'roaring';
interface Case extends ImportShape {
  kind: Kind;
}

const MAX_BITS_PER_REQUEST = 1 << 20;
const PILOSA_14_BITS_PER_SEC = 1.8e6;
const SKIP_OVER_MS = 90_000;
const M = 1e6;

const CASES: Case[] = [
  { kind: 'protobuf', bits: 1 * M, rows: 1, order: 'sorted' },
  { kind: 'protobuf', bits: 1 * M, rows: 1, order: 'random' },
  { kind: 'protobuf', bits: 1 * M, rows: 10_000, order: 'sorted' },
  { kind: 'protobuf', bits: 1 * M, rows: 10_000, order: 'random' },
  { kind: 'roaring', bits: 1 * M, rows: 10_000, order: 'sorted' },
  { kind: 'protobuf', bits: 10 * M, rows: 1, order: 'sorted' },
  { kind: 'protobuf', bits: 10 * M, rows: 10_000, order: 'sorted' },
  { kind: 'protobuf', bits: 10 * M, rows: 10_000, order: 'random' },
  { kind: 'roaring', bits: 10 * M, rows: 10_000, order: 'sorted' },
  { kind: 'protobuf', bits: 100 * M, rows: 10_000, order: 'sorted' },
  { kind: 'protobuf', bits: 100 * M, rows: 10_000, order: 'random' },
  { kind: 'roaring', bits: 100 * M, rows: 10_000, order: 'sorted' },
];

interface Bodies {
  shards: number[];
  bodies: Uint8Array[];
  bits: number;
  encodeMs: number;
}

export async function runImport(r: Reporter): Promise<void> {
  r.begin('import', 'import over HTTP, fsync always (issue 4)');
  r.note(
    'data: 1% density per row, bits from column 0, ≤ 1 shard and ~1M bits per request; "random" = each request shuffled; index with default options (trackExistence on)',
  );
  r.note(
    'log bytes: exact key+envelope+payload bytes read back from LevelDB after the server stopped (directory size in the notes)',
  );
  const wallByKey = new Map<string, number>();
  const only = process.env.BENCH_IMPORT_ONLY;
  for (const c of CASES) {
    if (only !== undefined && !label(c).includes(only)) continue;
    const smaller = wallByKey.get(key({ ...c, bits: c.bits / 10 }));
    if (c.bits >= 100 * M && (smaller === undefined || smaller * 10 > SKIP_OVER_MS)) {
      r.note(
        `skipped ${label(c)}: the 10× smaller case took ${smaller === undefined ? '(not run)' : `${(smaller / 1000).toFixed(1)} s`}, so this one would exceed ${SKIP_OVER_MS / 1000} s`,
      );
      continue;
    }
    const t0 = now();
    await runCase(r, c);
    wallByKey.set(key(c), now() - t0);
  }
}

const key = (c: Case): string => `${c.kind}/${c.bits}/${c.rows}/${c.order}`;
const label = (c: Case): string =>
  `${c.kind} ${c.bits / M}M bits, ${c.rows === 1 ? '1 row' : `${c.rows / 1000}k rows`}${c.kind === 'protobuf' ? `, ${c.order}` : ''}`;

async function runCase(r: Reporter, c: Case): Promise<void> {
  const l = label(c);
  const enc = encodeAll(c);
  const server = await startChildServer({ label: `import-${c.kind}`, fsync: 'always' });
  let ingestMs: number;
  try {
    const http = new HttpClient(server.url);
    await warmUp(http);
    await createIndex(http, 'i');
    await createField(http, 'i', 'f');
    const t0 = now();
    for (let k = 0; k < enc.bodies.length; k++) {
      if (c.kind === 'protobuf') await importProtobuf(http, 'i', 'f', enc.bodies[k]);
      else await importRoaring(http, 'i', 'f', enc.shards[k], enc.bodies[k]);
    }
    ingestMs = now() - t0;
    http.close();
  } finally {
    await server.stop();
  }
  const requests = enc.bodies.length;
  enc.bodies.length = 0; // the bodies can go before the log is read back
  let log: LogContents;
  let disk: number;
  try {
    log = await readLog(server.dataDir, 'i');
    disk = dirBytes(server.dataDir);
  } finally {
    removeDir(server.dataDir);
  }
  const rawMs = await rawWrite(log.kept, requests);
  const bytes = indexBytes(log, 'i');
  const fieldBytes = log.byTarget.get('i/f') ?? 0;
  const ours = enc.bits / (ingestMs / 1000);
  const target: Target | undefined =
    c.kind === 'roaring' ? undefined : { op: '>=', value: c.order === 'sorted' ? 20e6 : 5e6, source: 'issue 4' };
  r.figure(`${l}: durable ingest`, ours, 'bits/s', target);
  r.figure(`${l}: client encode`, enc.bits / (enc.encodeMs / 1000), 'bits/s');
  r.figure(`${l}: log bytes per bit`, bytes / enc.bits, 'B/bit', { op: '<=', value: 2.5, source: 'issue 4' });
  r.figure(`${l}: … of which field f alone`, fieldBytes / enc.bits, 'B/bit');
  r.figure(`${l}: ingest / raw LevelDB synced writes`, rawMs / ingestMs, '×', {
    op: '>=',
    value: 0.5,
    source: 'issue 4',
  });
  r.figure(`${l}: ours / Pilosa 1.4 (1.8M bits/s)`, ours / PILOSA_14_BITS_PER_SEC, '×');
  const exists = log.byTarget.get(`i/${EXISTS_FIELD}`) ?? 0;
  r.note(
    `${l}: ${requests} requests in ${(ingestMs / 1000).toFixed(2)} s; log of index i: ${log.kept.length} records, ${(bytes / MB).toFixed(1)} MB (${EXISTS_FIELD}: ${(exists / MB).toFixed(1)} MB; data dir ${(disk / MB).toFixed(1)} MB); raw: ${(rawMs / 1000).toFixed(2)} s = ${fmtRate(enc.bits / (rawMs / 1000))} bits/s`,
  );
}

let warmBodies: { proto: Uint8Array[]; roaring: Uint8Array } | undefined;

/** JIT warm-up of both import paths on index "warm", so a one-request case is not all compile time. */
async function warmUp(http: HttpClient): Promise<void> {
  warmBodies ??= {
    proto: (['sorted', 'random'] as const).map((order) => {
      const [chunk] = importChunks({ bits: 1 << 18, rows: 100, order }, 1 << 18);
      return encodeImportRequest({
        index: 'warm',
        field: 'f',
        shard: chunk.shard,
        rowIds: chunk.rowIds,
        columnIds: chunk.columnIds,
      });
    }),
    roaring: roaringBody([...importChunks({ bits: 1 << 18, rows: 100, order: 'sorted' }, 1 << 18)][0]),
  };
  await createIndex(http, 'warm');
  await createField(http, 'warm', 'f');
  for (let k = 0; k < 2; k++) {
    for (const body of warmBodies.proto) await importProtobuf(http, 'warm', 'f', body);
    await importRoaring(http, 'warm', 'f', 0, warmBodies.roaring);
  }
}

const fmtRate = (n: number): string => `${(n / M).toFixed(1)}M`;

function encodeAll(c: Case): Bodies {
  const out: Bodies = { shards: [], bodies: [], bits: 0, encodeMs: 0 };
  for (const chunk of importChunks(c, MAX_BITS_PER_REQUEST)) {
    const t0 = now();
    out.bodies.push(
      c.kind === 'protobuf'
        ? encodeImportRequest({
            index: 'i',
            field: 'f',
            shard: chunk.shard,
            rowIds: chunk.rowIds,
            columnIds: chunk.columnIds,
          })
        : roaringBody(chunk),
    );
    out.encodeMs += now() - t0;
    out.shards.push(chunk.shard);
    out.bits += chunk.rowIds.length;
  }
  return out;
}

/** One import-roaring body: the chunk's rows as bitmaps of column offsets (chunks are sorted). */
function roaringBody(chunk: Chunk): Uint8Array {
  const rows = new Map<number, Bitmap>();
  const base = chunk.shard * SHARD_WIDTH;
  for (let i = 0; i < chunk.rowIds.length; ) {
    const row = chunk.rowIds[i];
    let j = i;
    while (j < chunk.rowIds.length && chunk.rowIds[j] === row) j++;
    const offsets = new Uint32Array(j - i);
    for (let k = i; k < j; k++) offsets[k - i] = chunk.columnIds[k] - base;
    rows.set(row, new RoaringBitmap32(offsets));
    i = j;
  }
  return encodeImportRoaringRequest({ clear: false, views: [{ name: '', data: encodePilosaRoaring(rows) }] });
}

/** The case's log records, written to a fresh raw LevelDB in `batches` synced batches. */
async function rawWrite(records: LogRecordBytes[], batches: number): Promise<number> {
  const per = Math.ceil(records.length / batches);
  const groups: LogRecordBytes[][] = [];
  for (let i = 0; i < records.length; i += per) groups.push(records.slice(i, i + per));
  const dir = tempDir('raw-import');
  const db = await openRaw(dir);
  try {
    return await rawWriteBatches(db, groups);
  } finally {
    await db.close();
    removeDir(dir);
  }
}
