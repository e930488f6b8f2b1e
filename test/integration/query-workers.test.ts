// Query workers (issue 25) in a real server with two of them, over a real LevelDB: a read never
// sees a write that is not durable, and sees every acknowledged one; deadlines, a client that
// goes away and the result bound hold across workers; a restart (snapshot and log replay) with
// two workers or one answers as the live server did.
import { request } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { groupByFieldBody } from '../../bench/lib/group-by-data.js';
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import { QueryService } from '../../src/service/query-service.js';
import { type TestServer, startServer, stopServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const OPTS = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };
let server: TestServer;

/** Runs `f` with every share of a query sent to the workers (not the request thread's: here-share.ts). */
async function workersOnly<T>(f: () => Promise<T>): Promise<T> {
  const pool = server.queryWorkers;
  if (pool === undefined) throw new Error('the server started no query workers');
  pool.shareHere = false;
  try {
    return await f();
  } finally {
    pool.shareHere = true;
  }
}

async function post(path: string, body: string | Uint8Array, type = 'text/plain', to: TestServer = server) {
  const r = await to.app.inject({
    method: 'POST',
    url: path,
    payload: Buffer.from(body),
    headers: { 'content-type': type },
  });
  const json = (r.body === '' ? {} : r.json()) as { results?: unknown[]; error?: string };
  return { status: r.statusCode, json };
}

async function results(pql: string): Promise<unknown[]> {
  const r = await post('/index/i/query', pql);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json.results ?? [];
}

/**
 * GroupBy's heavy case over index g: every share visits about columns × rows row pairs, seconds of
 * work, so only its deadline or its client can end it. Without a limit the server's
 * --max-result-rows (3) would end each share at its fourth group, within 2 ms once the workers'
 * rows are warm (the deadline test warms them): sooner than a client's close arrives. With one,
 * the bound applies to the merged page only.
 */
const HEAVY_GROUP_BY = 'GroupBy(Rows(a), Rows(b), Rows(c), limit=1000000000)';

/** Index g: fields a, b, c of 1,000 rows each over `shards` shards of 50k columns (GroupBy's heavy case). */
async function loadGroupBy(shards: number, to: TestServer = server): Promise<void> {
  expect((await post('/index/g', '', 'text/plain', to)).status).toBe(200);
  for (const [i, f] of ['a', 'b', 'c'].entries()) {
    expect((await post(`/index/g/field/${f}`, '', 'text/plain', to)).status).toBe(200);
    const body = groupByFieldBody(i, 50_000, 1000);
    for (let s = 0; s < shards; s++)
      expect((await post(`/index/g/field/${f}/import-roaring/${s}`, body, 'application/x-protobuf', to)).status).toBe(
        200,
      );
  }
}

beforeAll(async () => {
  server = await startServer({ queryWorkers: 2, maxResultRows: 3 });
  await server.queryWorkers?.whenReady();
  // Every read that can go to the workers does, however small (the decision has its own test).
  if (server.queryWorkers !== undefined) server.queryWorkers.minWorkBits = 0;
  // Idle workers always share: whether that pays is ShareGain's (test/unit/service/here-share.test.ts).
  if (server.queryWorkers !== undefined) server.queryWorkers.adaptShare = false;
  expect((await post('/index/i', '')).status).toBe(200);
  expect((await post('/index/i/field/f', '')).status).toBe(200);
  expect(
    (await post('/index/i/field/n', JSON.stringify({ options: { type: 'int', min: -100, max: 100 } }))).status,
  ).toBe(200);
  const sets: string[] = [];
  for (let s = 0; s < 4; s++) for (let r = 1; r <= 5; r++) sets.push(`Set(${s * SHARD_WIDTH + r * 7}, f=${r})`);
  for (let s = 0; s < 4; s++) sets.push(`Set(${s * SHARD_WIDTH + 7}, n=${s * 10 - 15})`);
  await results(sets.join(' '));
  await loadGroupBy(4);
}, 120_000);

afterAll(async () => {
  server?.app.server.closeAllConnections();
  await stopServer(server);
});

describe('query workers: durability', () => {
  it('a read taken while a write is staged answers without it; once acknowledged, every read sees it', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('the server started no query workers');
    const q = new QueryService(server.engine, { queryTimeoutMs: 0, maxResultRows: 0 }, '', pool);
    const before = (await q.execute('i', 'Count(Row(f=1))', OPTS)).response.results;
    const jobs = pool.stats.jobs;
    // Both calls run synchronously up to their first wait: the write is applied and staged, not
    // durable, when the read is sent to the workers.
    const write = q.execute('i', `Set(${3 * SHARD_WIDTH + 1000}, f=1) Set(1001, f=1)`, OPTS);
    const read = q.execute('i', 'Count(Row(f=1))', OPTS);
    expect((await read).response.results).toEqual(before);
    expect(pool.stats.jobs).toBeGreaterThan(jobs);
    await write;
    expect((await q.execute('i', 'Count(Row(f=1))', OPTS)).response.results).toEqual(
      [(before[0] as { n: number }).n + 2].map((n) => ({ type: 'count', n })),
    );
    // A write's bits are all there or none: both shards' bits arrive in one publication.
    expect(await results('Row(f=1)')).toEqual([
      {
        attrs: {},
        columns: [7, 1001, SHARD_WIDTH + 7, 2 * SHARD_WIDTH + 7, 3 * SHARD_WIDTH + 7, 3 * SHARD_WIDTH + 1000],
      },
    ]);
  });
});

describe('query workers: bounds', () => {
  it('refuses results past --max-result-rows after the merge (Rows over shards, GroupBy)', async () => {
    const rows = await post('/index/i/query', 'Rows(f)');
    expect(rows.status).toBe(400);
    expect(rows.json.error).toMatch(/more than 3 rows \(max-result-rows\)/);
    const groups = await post('/index/i/query', 'GroupBy(Rows(f))');
    expect(groups.status).toBe(400);
    expect(await results('Rows(f, limit=3)')).toEqual([{ rows: [1, 2, 3] }]);
    expect(await results('Sum(field=n) Min(field=n) Max(field=n)')).toEqual([
      { value: -15 + -5 + 5 + 15, count: 4 },
      { value: -15, count: 1 },
      { value: 15, count: 1 },
    ]);
  });

  it('ends a query past its deadline in the workers with the deadline error', async () => {
    const failed = server.queryWorkers?.stats.failed ?? 0;
    const r = await workersOnly(() => post('/index/g/query?timeout=5ms', HEAVY_GROUP_BY));
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/query timeout: the query ran past its deadline of 5 ms/);
    expect(server.queryWorkers?.stats.failed).toBeGreaterThan(failed);
  });

  it('cancels the workers’ jobs when the client goes away, and keeps serving', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('no query workers');
    // The workers alone: this is their cancellation (the request thread's share is tested below).
    pool.shareHere = false;
    const jobs = pool.stats.jobs;
    const failed = pool.stats.failed;
    const url = `http://127.0.0.1:${await server.listen()}`;
    const req = request(`${url}/index/g/query`, { method: 'POST', headers: { 'content-type': 'text/plain' } });
    req.on('error', () => undefined);
    req.end(HEAVY_GROUP_BY);
    await until(() => pool.stats.jobs > jobs, { what: 'the GroupBy sent to the workers' });
    req.destroy();
    await until(() => pool.stats.cancelled > 0, { what: 'the jobs cancelled' });
    // The workers stop at their next shard and answer with the cancellation, not a result.
    await until(() => pool.stats.failed > failed, { what: 'the cancelled jobs ended by the workers' });
    pool.shareHere = true;
    expect(await results('Count(Row(f=2))')).toEqual([4]);
  });

  it('cancels the jobs at once when the client is gone before they are sent', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('no query workers');
    const cancelled = pool.stats.cancelled;
    const q = new QueryService(server.engine, { queryTimeoutMs: 0, maxResultRows: 0 }, '', pool);
    // An AbortSignal fires 'abort' once: a listener added after it never runs.
    await expect(q.execute('g', HEAVY_GROUP_BY, OPTS, { signal: AbortSignal.abort() })).rejects.toThrow(
      /query cancelled: the client closed the connection/,
    );
    expect(pool.stats.cancelled).toBeGreaterThan(cancelled);
  });
});

describe('query workers: which reads go', () => {
  it('keeps a Count over few bits and every Row on the request thread, and sends a Count of more bits or a GroupBy', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('the server started no query workers');
    pool.minWorkBits = 6;
    try {
      const jobs = pool.stats.jobs;
      // Row f=2 holds 4 bits over the 4 shards, f=2 and f=3 together 8.
      expect(await results('Count(Row(f=2))')).toEqual([4]);
      expect((await results('Row(f=2)')).length).toBe(1);
      // A call that answers columns stays here however many bits it reads (8 here).
      expect((await results('Union(Row(f=2), Row(f=3))')).length).toBe(1);
      expect(pool.stats.jobs).toBe(jobs);
      expect(await results('Count(Union(Row(f=2), Row(f=3)))')).toEqual([8]);
      expect(pool.stats.jobs).toBeGreaterThan(jobs);
      const afterUnion = pool.stats.jobs;
      await post('/index/g/query', 'GroupBy(Rows(a), limit=1)');
      expect(pool.stats.jobs).toBeGreaterThan(afterUnion);
    } finally {
      pool.minWorkBits = 0;
    }
  });
});

describe('query workers: the kept work estimate', () => {
  it('estimates a repeated query again once a write has changed its rows', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('the server started no query workers');
    pool.minWorkBits = 6;
    try {
      await results([0, 1, 2, 3].map((s) => `Set(${s * SHARD_WIDTH + 3}, f=9)`).join(' '));
      const jobs = pool.stats.jobs;
      // 4 bits: on the request thread, and again from the kept estimate.
      expect(await results('Count(Row(f=9))')).toEqual([4]);
      expect(await results('Count(Row(f=9))')).toEqual([4]);
      expect(pool.stats.jobs).toBe(jobs);
      await results([0, 1, 2, 3].map((s) => `Set(${s * SHARD_WIDTH + 4}, f=9)`).join(' '));
      // 8 bits since the write: the same text is estimated again, and goes to the workers.
      expect(await results('Count(Row(f=9))')).toEqual([8]);
      expect(pool.stats.jobs).toBeGreaterThan(jobs);
    } finally {
      pool.minWorkBits = 0;
    }
  });
});

describe("query workers: the request thread's share", () => {
  // Only while no job waits or runs: the earlier tests' jobs (a deadline's other share) end first.
  beforeEach(async () => {
    const pool = server.queryWorkers;
    await until(() => pool?.load().every((w) => w.queued === 0) === true, { what: 'the workers idle' });
  });

  it('computes the first share itself when the workers are idle, with the same answers', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('the server started no query workers');
    // GroupBy with a limited child has a first phase (its children rows over all shards).
    const pql = 'Count(Union(Row(f=1), Row(f=2))) Sum(Row(f=1), field=n) GroupBy(Rows(f, limit=2)) Rows(f, limit=3)';
    const shared = pool.stats.sharedHere;
    const here = await results(pql);
    expect(pool.stats.sharedHere).toBeGreaterThan(shared);
    const jobs = pool.stats.jobs;
    const mark = pool.stats.sharedHere;
    expect(await workersOnly(() => results(pql))).toEqual(here);
    expect(pool.stats.jobs).toBeGreaterThan(jobs);
    expect(pool.stats.sharedHere).toBe(mark);
  });

  it('gives the whole query to the workers when a write is applied during its share', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('the server started no query workers');
    const q = new QueryService(server.engine, { queryTimeoutMs: 0, maxResultRows: 0 }, '', pool);
    const count = async (): Promise<number> =>
      ((await q.execute('i', 'Count(Row(f=4))', OPTS)).response.results[0] as { n: number }).n;
    const before = await count();
    const moved = pool.stats.stateMoved;
    // The request thread claims shard 0 first (a quarter of the 4 shards: here-share.ts) and
    // yields after it: the write below is applied then, and sets a bit in shards 1 and 3, which
    // either thread may claim next.
    pool.hereSliceMs = 0;
    try {
      const read = q.execute('i', 'Count(Row(f=4))', OPTS);
      const write = q.execute('i', `Set(${SHARD_WIDTH + 2000}, f=4) Set(${3 * SHARD_WIDTH + 2000}, f=4)`, OPTS);
      // One state or the other (the workers read it again, the write durable by then or not),
      // never one of shards 1 and 3 read here with the write and the other in a worker without.
      const n = ((await read).response.results[0] as { n: number }).n;
      expect([before, before + 2]).toContain(n);
      expect(pool.stats.stateMoved).toBe(moved + 1);
      await write;
    } finally {
      pool.hereSliceMs = 1;
    }
    expect(await count()).toBe(before + 2);
  });

  it('gives the whole query to the workers when a write is applied between its two phases', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('the server started no query workers');
    const q = new QueryService(server.engine, { queryTimeoutMs: 0, maxResultRows: 0 }, '', pool);
    // Phase one (the children's rows) then the groups: its first phase's share here ends in its
    // first slice, before the write below; the second phase would read the write.
    const pql = 'GroupBy(Rows(f, limit=2))';
    const groups = async (): Promise<unknown> => (await q.execute('i', pql, OPTS)).response.results;
    const before = await groups();
    const moved = pool.stats.stateMoved;
    const read = q.execute('i', pql, OPTS);
    const write = q.execute('i', `Set(${SHARD_WIDTH + 3000}, f=1) Set(${3 * SHARD_WIDTH + 3000}, f=1)`, OPTS);
    const got = (await read).response.results;
    expect(pool.stats.stateMoved).toBe(moved + 1);
    await write;
    const after = await groups();
    expect(after).not.toEqual(before);
    expect([before, after]).toContainEqual(got);
  });

  it('ends its share at the deadline with the deadline error', async () => {
    const pool = server.queryWorkers;
    if (pool === undefined) throw new Error('the server started no query workers');
    const shared = pool.stats.sharedHere;
    const r = await post('/index/g/query?timeout=5ms', HEAVY_GROUP_BY);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/query timeout: the query ran past its deadline of 5 ms/);
    expect(pool.stats.sharedHere).toBeGreaterThan(shared);
    // The worker's share ends at its own deadline: nothing stays queued.
    await until(() => pool.load().every((w) => w.queued === 0), { what: 'the worker share ended' });
  });
});

// Jobs taking turns (a small query answered while a long GroupBy runs in the workers) is shown by
// query-bounds.test.ts in the query-workers run (vitest.query-workers.config.ts).
describe('query workers: figures', () => {
  it('shows the workers, their jobs, queues and busy time on /metrics', async () => {
    await results('Count(Row(f=1))');
    const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body;
    const figure = (line: RegExp): number => Number(line.exec(text)?.[1] ?? Number.NaN);
    expect(figure(/^bitledger_query_workers (\S+)$/m)).toBe(2);
    expect(figure(/^bitledger_query_worker_jobs_total (\S+)$/m)).toBe(server.queryWorkers?.stats.jobs);
    expect(figure(/^bitledger_query_worker_cancelled_jobs_total (\S+)$/m)).toBe(server.queryWorkers?.stats.cancelled);
    expect(figure(/^bitledger_query_worker_shared_phases_total (\S+)$/m)).toBe(server.queryWorkers?.stats.sharedHere);
    expect(figure(/^bitledger_query_worker_shared_phases_total (\S+)$/m)).toBeGreaterThan(0);
    expect(figure(/^bitledger_query_worker_state_moved_total (\S+)$/m)).toBe(server.queryWorkers?.stats.stateMoved);
    for (const w of ['0', '1']) {
      expect(
        figure(new RegExp(`^bitledger_query_worker_busy_seconds\\{worker="${w}"\\} (\\S+)$`, 'm')),
      ).toBeGreaterThan(0);
      expect(figure(new RegExp(`^bitledger_query_worker_queued_jobs\\{worker="${w}"\\} (\\S+)$`, 'm'))).toBe(0);
    }
  });
});

describe('query workers: restart', () => {
  const QUERIES = [
    'Count(Union(Row(f=1), Row(f=2)))',
    'Row(f=1)',
    'Difference(Row(f=1), Row(f=2))',
    'Not(Row(f=3))',
    'Row(n > 0)',
    'Sum(Row(f=1), field=n)',
    'MaxRow(field=f)',
    'GroupBy(Rows(f), limit=2)',
    'Options(Count(Row(f=1)), shards=[0, 2])',
  ];

  it('answers as the live server after a snapshot, more writes, and a restart with two workers or one', async () => {
    const live = await results(QUERIES.join(' '));
    await server.engine.snapshots.take();
    await results(`Clear(${SHARD_WIDTH + 14}, f=2) Set(${2 * SHARD_WIDTH + 99}, f=4) ClearRow(f=5)`);
    const after = await results(QUERIES.join(' '));
    expect(after).not.toEqual(live);
    const dataDir = server.dataDir;
    server.app.server.closeAllConnections();
    await server.close();
    for (const queryWorkers of [2, 1]) {
      server = await startServer({ dataDir, queryWorkers, maxResultRows: 3 });
      await server.queryWorkers?.whenReady();
      expect(server.queryWorkers?.size).toBe(queryWorkers === 1 ? undefined : 2);
      expect(await results(QUERIES.join(' '))).toEqual(after);
      if (queryWorkers === 2) await server.close();
    }
  }, 300_000);
});
