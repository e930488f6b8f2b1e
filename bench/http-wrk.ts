// Issue 24: wrk (one thread) against a server process on the shapes of the issue, beside a bare
// fastify "floor" server answering the same Count from the same roaring bitmaps, same run.
// Index i: f rows 1–2 at 10% over 16 shards; g 1,000 rows over 16 shards, 100k bits a shard;
// s random single-bit Sets. Req/s and p50/p99 at 1 and 16 connections, three interleaved rounds
// (range reported); TopN's time per query beside the raw count work of its shards.
import { SERVER_NODE_FLAGS } from '../src/config/node-flags.js';
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { encodeImportRoaringRequest } from '../src/encoding/public-proto.js';
import { SHARD_WIDTH } from '../src/domain/shard.js';
import { encodePilosaRoaring } from '../src/roaring/pilosa-roaring.js';
import { type Bitmap, RoaringBitmap32 } from '../src/roaring/bitmap.js';
import { bitmapPool } from './lib/bitmaps.js';
import { writeFloorData } from './lib/floor-server.js';
import { HttpClient } from './lib/http-client.js';
import { createField, createIndex, heapTrims, importRoaring, query } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { REPO_ROOT, freePort, removeDir, startChildServer, tempDir } from './lib/server-child.js';
import { requestFeatureCosts } from './lib/request-features.js';
import { bestOfRounds } from './lib/stats.js';
import { type WrkResult, wrkPost } from './lib/wrk.js';

const SHARDS = 16;
const G_ROWS = 1000;
const G_BITS_PER_SHARD = 100_000;
const SECONDS = Number(process.env.BENCH_HTTP_SECONDS ?? 4);
const ROUNDS = 3;
export const COUNT = 'Count(Intersect(Row(f=1), Row(f=2)))';
export const TOPN = 'TopN(g, n=10)';
/** Pilosa 1.4.0 on this machine, same wrk, one run (issue 24). */
const PILOSA = { count: [559, 696], topN: [757, 1215] };

export interface HttpShapes {
  f: [Bitmap, Bitmap][];
  g: Map<number, Bitmap>[];
}

export function httpShapes(): HttpShapes {
  const pool = bitmapPool(0.1, 4);
  const f = Array.from({ length: SHARDS }, (_, s): [Bitmap, Bitmap] => [pool[s % 4], pool[(s + 1) % 4]]);
  const g = Array.from({ length: SHARDS }, () => {
    const cols = Array.from({ length: G_ROWS }, () => [] as number[]);
    for (let i = 0; i < G_BITS_PER_SHARD; i++)
      cols[Math.floor(Math.random() * G_ROWS)].push(Math.floor(Math.random() * SHARD_WIDTH));
    return new Map(cols.map((c, row) => [row, new RoaringBitmap32(c)] as [number, Bitmap]));
  });
  return { f, g };
}

export async function loadShapes(c: HttpClient, d: HttpShapes): Promise<void> {
  await createIndex(c, 'i');
  for (const name of ['f', 'g', 's']) await createField(c, 'i', name);
  for (let s = 0; s < SHARDS; s++) {
    const [a, b] = d.f[s];
    await importRoaring(
      c,
      'i',
      'f',
      s,
      roaringBody(
        new Map([
          [1, a],
          [2, b],
        ]),
      ),
    );
    await importRoaring(c, 'i', 'g', s, roaringBody(d.g[s]));
  }
  for (let k = 0; k < 200; k++) {
    const col = Math.floor(Math.random() * SHARDS * SHARD_WIDTH);
    await query(c, 'i', `Set(${col}, s=${Math.floor(Math.random() * 100)})`);
  }
  await c.ok('POST', '/recalculate-caches');
}

/**
 * Waits for the server's returns of freed memory after the load (util/heap-trim.ts: 1 s after
 * bulk writes go quiet, again 5 s later, two full collections of 100-160 ms each): one-off
 * work after an import that otherwise lands in the first measured rounds. None within 5 s: the
 * load was too small to call for one (or the server cannot trim); bounded at 15 s.
 */
async function afterHeapTrims(c: HttpClient): Promise<void> {
  const start = Date.now();
  for (;;) {
    const trims = await heapTrims(c);
    const waited = Date.now() - start;
    if (trims >= 2 || (trims === 0 && waited >= 5000) || waited >= 15_000) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function roaringBody(rows: Map<number, Bitmap>): Uint8Array {
  return encodeImportRoaringRequest({ clear: false, views: [{ name: '', data: encodePilosaRoaring(rows) }] });
}

export async function runHttpWrk(r: Reporter): Promise<void> {
  r.begin('http', 'wrk, one thread, against bitledger and the floor server (issue 24)');
  const shapes = httpShapes();
  const server = await startChildServer({ label: 'http' });
  const floorDir = tempDir('floor');
  let floor: ChildProcess | undefined;
  try {
    const setup = new HttpClient(server.url);
    await loadShapes(setup, shapes);
    await afterHeapTrims(setup);
    const floorUrl = await startFloor(floorDir, shapes, (p) => {
      floor = p;
    });
    const want = JSON.stringify(await query(setup, 'i', COUNT));
    const floorSays = await (await fetch(`${floorUrl}/index/i/query`, { method: 'POST', body: COUNT })).text();
    if (floorSays !== want) throw new Error(`the floor answers ${floorSays}, bitledger ${want}`);
    setup.close();
    r.note(
      `load average before the runs: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    const targets = {
      floor: { url: `${floorUrl}/index/i/query`, body: COUNT, pid: floor?.pid },
      count: { url: `${server.url}/index/i/query`, body: COUNT, pid: server.pid },
      topN: { url: `${server.url}/index/i/query`, body: TOPN, pid: server.pid },
    };
    let countUs = 0;
    let topNUs = 0;
    for (const c of [1, 16]) {
      const runs: Record<keyof typeof targets, WrkResult[]> = { floor: [], count: [], topN: [] };
      for (let round = 0; round < ROUNDS; round++)
        for (const k of Object.keys(targets) as (keyof typeof targets)[])
          runs[k].push(await wrkPost(targets[k].url, targets[k].body, c, SECONDS, targets[k].pid));
      reportConnections(r, c, runs);
      if (c === 1) {
        countUs = 1e6 / Math.max(...runs.count.map((x) => x.perSecond));
        topNUs = 1e6 / Math.max(...runs.topN.map((x) => x.perSecond));
      }
    }
    r.note(
      `load average after the runs: ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    await requestPathSplit(r, floorUrl, floor?.pid, server.url, server.pid);
    await rawCountWork(r, shapes, topNUs, countUs);
    await requestFeatureCosts(r, COUNT, TOPN, countUs);
  } finally {
    if (floor?.pid !== undefined && floor.exitCode === null) floor.kill('SIGTERM');
    removeDir(floorDir);
    await server.dispose();
  }
}

function reportConnections(r: Reporter, c: number, runs: Record<'floor' | 'count' | 'topN', WrkResult[]>): void {
  const i = c === 1 ? 0 : 1;
  const range = (xs: number[]): string => `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))}`;
  const rate = (k: 'floor' | 'count' | 'topN'): number[] => runs[k].map((x) => x.perSecond);
  for (const k of ['floor', 'count', 'topN'] as const)
    r.note(
      `${c} conn ${k}: ${range(rate(k))} req/s, p50 ${runs[k].map((x) => x.p50Ms.toFixed(2)).join('/')} ms, p99 ${runs[k].map((x) => x.p99Ms.toFixed(2)).join('/')} ms`,
    );
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  r.figure(`floor Count req/s, ${c} conn (median of ${ROUNDS})`, median(rate('floor')), 'req/s');
  r.figure(`Count(Intersect) req/s, ${c} conn`, median(rate('count')), 'req/s');
  const ratios = runs.count.map((x, k) => x.perSecond / runs.floor[k].perSecond);
  r.figure(`  Count / floor, ${c} conn (worst round)`, Math.min(...ratios), '×', {
    op: '>=',
    value: 0.9,
    source: 'issue 24',
  });
  r.figure(`  Count / Pilosa 1.4 (${PILOSA.count[i]} req/s)`, median(rate('count')) / PILOSA.count[i], '×');
  r.figure(`  Count p50, ${c} conn`, median(runs.count.map((x) => x.p50Ms)), 'ms');
  r.figure(`  Count p99, ${c} conn`, median(runs.count.map((x) => x.p99Ms)), 'ms');
  reportCpu(r, c, runs);
  r.figure(`TopN(g, n=10) req/s, ${c} conn`, median(rate('topN')), 'req/s', {
    op: '>=',
    value: c === 1 ? 1600 : 2500,
    source: 'issue 24: 2× Pilosa 1.4',
  });
  r.figure(`  TopN / Pilosa 1.4 (${PILOSA.topN[i]} req/s)`, median(rate('topN')) / PILOSA.topN[i], '×');
  r.figure(`  TopN p50, ${c} conn`, median(runs.topN.map((x) => x.p50Ms)), 'ms');
  r.figure(`  TopN p99, ${c} conn`, median(runs.topN.map((x) => x.p99Ms)), 'ms');
}

/**
 * The servers' CPU time a request (median of the rounds): what a request costs the server
 * whatever else the machine runs, where req/s at 1 connection also counts waits for a core.
 */
function reportCpu(r: Reporter, c: number, runs: Record<'floor' | 'count' | 'topN', WrkResult[]>): void {
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const cpu = (k: 'floor' | 'count' | 'topN'): number | undefined => {
    const xs = runs[k].flatMap((x) => (x.cpuUs === undefined ? [] : [x.cpuUs]));
    return xs.length === 0 ? undefined : median(xs);
  };
  const [floor, count, topN] = [cpu('floor'), cpu('count'), cpu('topN')];
  if (floor === undefined || count === undefined || topN === undefined) return;
  r.figure(`  server CPU a request, ${c} conn: floor Count`, floor, 'µs');
  r.figure(`  server CPU a request, ${c} conn: Count`, count, 'µs');
  r.figure(`  server CPU a request, ${c} conn: TopN`, topN, 'µs');
  r.figure(`  floor's CPU a Count / bitledger's, ${c} conn`, floor / count, '×');
}

/** A Count of two rows that hold no bits: the same request path with no intersection work. */
export const EMPTY_COUNT = 'Count(Intersect(Row(f=7), Row(f=8)))';

/**
 * Where a Count's CPU goes, at 16 connections: each server's request path alone (the floor's
 * /empty route, bitledger's Count of two empty rows) and the intersections (the rest), median
 * of interleaved rounds.
 */
async function requestPathSplit(
  r: Reporter,
  floorUrl: string,
  floorPid: number | undefined,
  url: string,
  pid: number,
): Promise<void> {
  const targets = {
    floor: [`${floorUrl}/index/i/query`, COUNT, floorPid],
    floorEmpty: [`${floorUrl}/empty/i/query`, COUNT, floorPid],
    count: [`${url}/index/i/query`, COUNT, pid],
    countEmpty: [`${url}/index/i/query`, EMPTY_COUNT, pid],
  } as const;
  const cpu: Record<keyof typeof targets, number[]> = { floor: [], floorEmpty: [], count: [], countEmpty: [] };
  for (let round = 0; round < ROUNDS; round++)
    for (const k of Object.keys(targets) as (keyof typeof targets)[]) {
      const [u, body, p] = targets[k];
      const w = await wrkPost(u, body, 16, Math.max(2, SECONDS - 1), p);
      if (w.cpuUs !== undefined) cpu[k].push(w.cpuUs);
    }
  if (Object.values(cpu).some((xs) => xs.length === 0)) return;
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const [floor, floorEmpty, count, countEmpty] = [cpu.floor, cpu.floorEmpty, cpu.count, cpu.countEmpty].map(median);
  r.note('server CPU a request at 16 conn, split (median of interleaved rounds):');
  r.figure('  request path alone: floor (/empty)', floorEmpty, 'µs');
  r.figure('  request path alone: bitledger (Count of two empty rows)', countEmpty, 'µs');
  r.figure('  intersections: floor (Count − /empty)', floor - floorEmpty, 'µs');
  r.figure('  intersections: bitledger (Count − empty Count)', count - countEmpty, 'µs');
}

/** The raw count work of TopN's shards (every row's size) and of Count (16 intersections). */
async function rawCountWork(r: Reporter, d: HttpShapes, topNUs: number, countUs: number): Promise<void> {
  const t = await bestOfRounds({
    sizes: () => {
      let n = 0;
      for (const rows of d.g) for (const bm of rows.values()) n += bm.size;
      return n;
    },
    intersections: () => {
      let n = 0;
      for (const [a, b] of d.f) n += a.andCardinality(b);
      return n;
    },
  });
  r.figure('TopN(g, n=10) time a query at 1 conn (best round)', topNUs, 'µs');
  r.figure('  raw count work of its shards: every g row size in every shard (16 × 1,000)', t.sizes * 1000, 'µs');
  r.figure('  TopN a query / raw count work', topNUs / (t.sizes * 1000), '×');
  r.figure('Count(Intersect) time a query at 1 conn (best round)', countUs, 'µs');
  r.figure('  raw count work: the intersections of 16 shards', t.intersections * 1000, 'µs');
  r.figure('  Count a query / raw count work', countUs / (t.intersections * 1000), '×');
}

async function startFloor(dir: string, d: HttpShapes, keep: (p: ChildProcess) => void): Promise<string> {
  const file = join(dir, 'floor.bin');
  writeFloorData(file, d.f);
  const port = await freePort();
  const proc = spawn(process.execPath, [...SERVER_NODE_FLAGS, 'dist/bench/lib/floor-server.js', String(port), file], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  keep(proc);
  await new Promise<void>((res, rej) => {
    proc.stdout?.on('data', (b: Buffer) => {
      if (b.toString().includes('listening')) res();
    });
    proc.once('exit', (code) => rej(new Error(`floor server exited with ${code}`)));
  });
  return `http://127.0.0.1:${port}`;
}
