// Issue 16, scale on one node: 64M bits (BENCH_SCALE_BITS for more, e.g. 640e6) over shards of 1M
// bits, one protobuf import per shard, in three shapes: sparse (1,000 rows per shard, ~1,000 bits
// per row: array containers), dense (4 rows, ~25% of a shard each: bitmap containers) and runs
// (16 rows of 1,000-bit runs: run containers once optimized). Per shape: import bits/s, resident
// bytes per bit added (RSS delta after a GC) beside the serialized size of the same bitmaps,
// snapshot write MB/s, restart (a new server process until /status answers) against reading the
// data directory's bytes in the same run, and Count/TopN over all shards.
// Per shape, a child process of the bench generates the data and sends it to a server process of
// its own (`bitledger server`, whose RSS is read after forced collections: lib/gc-hook.ts), then
// loads the data directory again in itself to count the bitmaps and their resident size.
import { SERVER_NODE_FLAGS } from '../src/config/node-flags.js';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { createServer } from '../src/app.js';
import { DEFAULTS } from '../src/config/config.js';
import { SHARD_WIDTH } from '../src/domain/shard.js';
import { encodeImportRequest } from '../src/encoding/import-request-encode.js';
import type { ReadonlyHolder } from '../src/state/readonly.js';
import { HttpClient } from './lib/http-client.js';
import { dirBytes } from './lib/log-bytes.js';
import { createField, createIndex, heapTrims, importProtobuf, query } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { REPO_ROOT, freePort, removeDir, serverArgs, startChildServer, tempDir } from './lib/server-child.js';
import { MB, now, percentile } from './lib/stats.js';

type Shape = 'sparse' | 'dense' | 'runs';
interface ShapeReporter {
  figure(...f: Parameters<Reporter['figure']>): unknown;
  note(text: string): void;
}
const SHAPES: Shape[] = ['sparse', 'dense', 'runs'];
const BITS_PER_SHARD = 1_000_000;

const gc: () => void = (() => {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g !== undefined) return g;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

/**
 * Resident bytes after full GCs with pauses between them: native bitmaps are freed by finalizers
 * that run after the GC that found them dead, and may free more for the next one.
 */
async function settledRss(): Promise<number> {
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 200));
  }
  return process.memoryUsage().rss;
}

/** One shard's import: rows ascending, columns ascending within a row (duplicates possible). */
function shardChunk(shape: Shape, shard: number): { rowIds: Float64Array; columnIds: Float64Array } {
  const base = shard * SHARD_WIDTH;
  const rows = shape === 'sparse' ? 1000 : shape === 'dense' ? 4 : 16;
  const per = BITS_PER_SHARD / rows;
  const rowIds = new Float64Array(BITS_PER_SHARD);
  const columnIds = new Float64Array(BITS_PER_SHARD);
  let n = 0;
  for (let row = 0; row < rows; row++) {
    const cols = new Float64Array(per);
    if (shape === 'runs') {
      // Runs of 1,000 columns at random starts on a 16,384-column grid (runs never overlap).
      const starts = new Set<number>();
      while (starts.size < per / 1000) starts.add(Math.floor(Math.random() * (SHARD_WIDTH / 16384)) * 16384);
      let k = 0;
      for (const s of [...starts].sort((a, b) => a - b)) for (let c = 0; c < 1000; c++) cols[k++] = s + c;
    } else {
      for (let k = 0; k < per; k++) cols[k] = Math.floor(Math.random() * SHARD_WIDTH);
      cols.sort();
    }
    rowIds.fill(row, n, n + per);
    for (let k = 0; k < per; k++) columnIds[n + k] = base + cols[k];
    n += per;
  }
  return { rowIds, columnIds };
}

/** Bits held and their portable serialized size, over every fragment of the holder (each row read). */
function heldBitmaps(holder: ReadonlyHolder): { bits: number; serialized: number; rows: number } {
  // bits: field f's (what was imported); serialized and rows: everything held, _exists too.
  let bits = 0;
  let serialized = 0;
  let rows = 0;
  for (const index of holder.indexes.values())
    for (const field of index.fields.values())
      for (const view of field.views.values())
        for (const frag of view.fragments.values())
          for (const bm of frag.rows.values()) {
            if (field.name === 'f') bits += bm.size;
            serialized += bm.getSerializationSizeInBytes('portable');
            rows++;
          }
  return { bits, serialized, rows };
}

/** Reads every file under dir, as a restart must at least do; returns ms and bytes. */
function rawRead(dir: string): { ms: number; bytes: number } {
  const t0 = now();
  let bytes = 0;
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else bytes += readFileSync(p).length;
    }
  };
  walk(dir);
  return { ms: now() - t0, bytes };
}

/** A server process on `dataDir`: ms from spawn until /status answers, and its own load report. */
async function restart(dataDir: string): Promise<{ ms: number; loadMs: number; rss: number }> {
  const port = await freePort();
  const t0 = now();
  const proc = spawn(
    process.execPath,
    [...SERVER_NODE_FLAGS, ...serverArgs(['dist/src/main.js'], dataDir, port, 'info')],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`restarted server exited with ${proc.exitCode}: ${out.slice(-2000)}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/status`)).ok) break;
      } catch {
        // not listening yet
      }
      if (now() - t0 > 120_000) throw new Error(`restart did not answer /status within 120 s: ${out.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    const ms = now() - t0;
    const m = /on snapshot \d+ in (\d+) ms/.exec(out);
    // Resident set of the restarted process once it answers (no forced GC there).
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;
    return { ms, loadMs: m === null ? NaN : Number(m[1]), rss };
  } finally {
    proc.kill('SIGTERM');
    await exited;
  }
}

/**
 * Waits (up to 30 s) for the two trims that follow bulk writes (1 s and 6 s after them); notes
 * it when the server cannot trim.
 */
async function serverTrimmed(http: HttpClient, before: number): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 100) {
    if ((await heapTrims(http)) >= before + 2) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  process.stderr.write('scale: the server did not trim after the import (addon not built?)\n');
}

async function runShape(
  r: ShapeReporter,
  shape: Shape,
  totalBits: number,
  base: { ms: number; rss: number },
): Promise<void> {
  const baseRestartMs = base.ms;
  const logger = pino({ level: 'warn' }, pino.destination(2)); // stdout carries the figures
  const shards = Math.ceil(totalBits / BITS_PER_SHARD);
  const rssFile = join(tempDir(`scale-rss-${shape}`), 'rss');
  process.env.BENCH_GC_RSS_FILE = rssFile;
  // The server as it runs in production (its own process, the README's command), which reads
  // its RSS after full collections when signalled (lib/gc-hook.ts). Snapshots only when asked:
  // the import's own figure should not include one.
  const child = await startChildServer({
    label: `scale-${shape}`,
    nodeArgs: ['--expose-gc', '--import', pathToFileURL(join(REPO_ROOT, 'dist/bench/lib/gc-hook.js')).href],
    extraArgs: ['--snapshot-every-events', '1000000000000', '--snapshot-every-bytes', '1000000000000000'],
  });
  const dataDir = child.dataDir;
  const childRss = async (): Promise<NodeJS.MemoryUsage> => {
    rmSync(rssFile, { force: true });
    process.kill(child.pid, 'SIGUSR2');
    for (let waited = 0; !existsSync(rssFile); waited += 50) {
      if (waited > 60_000) throw new Error('the server child did not report its RSS');
      await new Promise((res) => setTimeout(res, 50));
    }
    return JSON.parse(readFileSync(rssFile, 'utf8')) as NodeJS.MemoryUsage;
  };
  let stopped = false;
  try {
    const http = new HttpClient(child.url);
    await createIndex(http, 'i');
    await createField(http, 'i', 'f');
    const mem0 = await childRss();
    const trims0 = await heapTrims(http);
    let ingestMs = 0;
    for (let shard = 0; shard < shards; shard++) {
      const body = encodeImportRequest({ index: 'i', field: 'f', shard, ...shardChunk(shape, shard) });
      const t0 = now();
      await importProtobuf(http, 'i', 'f', body);
      ingestMs += now() - t0;
    }
    // The server returns what the import freed to the kernel once writes go quiet
    // (util/heap-trim.ts): the figure is taken after that, as a server left alone would be.
    await serverTrimmed(http, trims0);
    const mem1 = await childRss();
    const [rss0, rss1] = [mem0.rss, mem1.rss];
    const label = `${shape} ${(totalBits / 1e6).toFixed(0)}M`;
    r.figure(`${label}: import`, totalBits / (ingestMs / 1000), 'bits/s');

    await http.ok('POST', '/recalculate-caches');
    for (const [name, pql] of [
      ['Count', 'Count(Row(f=1))'],
      ['TopN', 'TopN(f, n=10)'],
    ] as const) {
      const times: number[] = [];
      for (let k = 0; k < 15; k++) {
        const t0 = now();
        await query(http, 'i', pql);
        times.push(now() - t0);
      }
      r.figure(`${label}: ${name} over ${shards} shards, p50`, percentile(times, 50), 'ms');
    }

    const t0 = now();
    await http.ok('POST', '/internal/snapshot');
    const snapMs = now() - t0;
    const snapBytes = dirBytes(join(dataDir, 'snapshots'));
    r.figure(`${label}: snapshot write`, snapBytes / MB / (snapMs / 1000), 'MB/s');
    http.close();
    await child.stop();
    stopped = true;

    // The same data directory loaded again in this process, where a GC can settle the figure
    // and the bitmaps can be counted (every fragment touched, so none is left deferred).
    const rssBefore = await settledRss();
    const reloaded = await createServer(
      { ...DEFAULTS, dataDir, bind: '127.0.0.1:0', logLevel: 'warn' },
      logger,
      (err) => {
        throw err;
      },
    );
    // Rows as a restart leaves them (frozen bytes, no views: state/fragment.ts), then every row
    // read once (a view each, kept), which is where a server that queried every row ends up.
    const rssReloaded = await settledRss();
    const held = reloaded.engine.peekApplied(heldBitmaps);
    const rssViewed = await settledRss();
    await reloaded.close();
    r.figure(
      `${label}: resident per bit after import (server process)`,
      (rss1 - rss0) / held.bits,
      'B/bit',
      shape === 'sparse' ? { op: '<=', value: 3, source: 'issue 16' } : undefined,
    );
    r.figure(`${label}: serialized per bit`, held.serialized / held.bits, 'B/bit');
    r.figure(
      `${label}: resident after import / serialized`,
      (rss1 - rss0) / held.serialized,
      '×',
      shape === 'dense' ? { op: '<=', value: 1.3, source: 'issue 16' } : undefined,
    );
    r.note(
      `${label}: ${held.bits} bits in field f, ${held.rows} rows (incl. _exists); server RSS +${((rss1 - rss0) / MB).toFixed(1)} MB after import (V8 heap used +${((mem1.heapUsed - mem0.heapUsed) / MB).toFixed(1)} MB, committed +${((mem1.heapTotal - mem0.heapTotal) / MB).toFixed(1)} MB, array buffers +${((mem1.arrayBuffers - mem0.arrayBuffers) / MB).toFixed(1)} MB), serialized ${(held.serialized / MB).toFixed(1)} MB`,
    );
    r.figure(
      `${label}: resident per bit after a reload`,
      (rssReloaded - rssBefore) / held.bits,
      'B/bit',
      shape === 'sparse' ? { op: '<=', value: 3, source: 'issue 16' } : undefined,
    );
    r.figure(
      `${label}: … / serialized`,
      (rssReloaded - rssBefore) / held.serialized,
      '×',
      shape === 'dense' ? { op: '<=', value: 1.3, source: 'issue 16' } : undefined,
    );
    r.figure(
      `${label}: resident per bit after a reload and every row read`,
      (rssViewed - rssBefore) / held.bits,
      'B/bit',
    );

    const raw = rawRead(dataDir);
    const re = await restart(dataDir);
    r.figure(`${label}: restart until /status answers`, re.ms / 1000, 's', {
      op: '<=',
      value: totalBits > 100e6 ? 5 : 0.5,
      source: 'issue 16',
    });
    r.figure(`${label}: restart / raw read of the data dir`, re.ms / raw.ms, '×', {
      op: '<=',
      value: 10,
      source: 'issue 16',
    });
    r.figure(`${label}: (restart − empty restart) / raw read`, (re.ms - baseRestartMs) / raw.ms, '×');
    r.figure(`${label}: resident per bit after restart (no GC)`, (re.rss - base.rss) / held.bits, 'B/bit');
    r.note(
      `${label}: snapshot ${(snapBytes / MB).toFixed(1)} MB in ${snapMs.toFixed(0)} ms; data dir ${(dirBytes(dataDir) / MB).toFixed(1)} MB read raw in ${raw.ms.toFixed(0)} ms (page cache warm); ` +
        `restart ${re.ms.toFixed(0)} ms of which snapshot load + replay ${re.loadMs} ms; an empty data dir restarts in ${baseRestartMs.toFixed(0)} ms`,
    );
  } finally {
    if (!stopped) await child.stop();
    rmSync(dirname(rssFile), { recursive: true, force: true });
    // BENCH_SCALE_KEEP=1 leaves the data directory for a look at restarts by hand.
    if (process.env.BENCH_SCALE_KEEP === '1') r.note(`${shape}: data dir kept at ${dataDir}`);
    else removeDir(dataDir);
  }
}

export async function runScale(r: Reporter): Promise<void> {
  const totalBits = Number(process.env.BENCH_SCALE_BITS ?? 64e6);
  const only = process.env.BENCH_SCALE_ONLY;
  r.begin('scale', `scale on one node: ${(totalBits / 1e6).toFixed(0)}M bits (issue 16)`);
  r.note(
    'per shape: a server process (GC forced before its RSS is read) fed by a generator process, which then reloads the data dir in itself to count bitmaps; restarts are new processes on the same data dir; fsync always; index with default options (trackExistence on)',
  );
  const empty = tempDir('scale-empty');
  let base: { ms: number; rss: number };
  try {
    await restart(empty); // creates the data dir's files, warms the file cache
    base = await restart(empty);
  } finally {
    removeDir(empty);
  }
  for (const shape of SHAPES) if (only === undefined || shape === only) await inChild(r, shape, totalBits, base);
}

/**
 * Each shape in a fresh process: heap holes a previous shape freed would otherwise absorb the
 * next one's bitmaps and hide them from the RSS delta. The child prints its figures as JSON lines.
 */
async function inChild(r: Reporter, shape: Shape, totalBits: number, base: { ms: number; rss: number }): Promise<void> {
  const proc = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_SCALE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
      '--expose-gc',
      fileURLToPath(import.meta.url),
      'shape',
      shape,
      String(totalBits),
      String(base.ms),
      String(base.rss),
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let buf = '';
  proc.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.startsWith('{')) continue;
      const m = JSON.parse(line) as { figure?: Parameters<Reporter['figure']>; note?: string };
      // JSON has no undefined: a figure without a target arrives with null.
      if (m.figure !== undefined) r.figure(m.figure[0], m.figure[1], m.figure[2], m.figure[3] ?? undefined);
      if (m.note !== undefined) r.note(m.note);
    }
  });
  const code = await new Promise<number | null>((res) => proc.once('exit', (c) => res(c)));
  if (code !== 0) throw new Error(`scale ${shape} child exited with ${code}`);
}

/** The child's reporter: figures and notes go to the parent as JSON lines. */
const lineReporter: ShapeReporter = {
  figure: (...f: Parameters<Reporter['figure']>): void =>
    void process.stdout.write(JSON.stringify({ figure: f }) + '\n'),
  note: (note: string): void => void process.stdout.write(JSON.stringify({ note }) + '\n'),
};

if (process.argv[2] === 'shape' && process.argv[1] === fileURLToPath(import.meta.url)) {
  const [shape, bits, ms, rss] = process.argv.slice(3);
  await runShape(lineReporter, shape as Shape, Number(bits), { ms: Number(ms), rss: Number(rss) });
}
