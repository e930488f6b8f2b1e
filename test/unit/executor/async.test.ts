import { once } from 'node:events';
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SHARD_WIDTH } from '../../../src/domain/shard.js';
import { executeQuery, executeQueryAsync, queryBudget } from '../../../src/executor/index.js';
import { parse } from '../../../src/pql/index.js';
import { systemClock } from '../../../src/util/clock.js';
import { runQueryAsync } from '../../../src/service/query/index.js';
import { fixture } from './fixture.js';
import { MemorySink, NOW, defaultOpts, run } from './harness.js';

function manyShards(n: number): MemorySink {
  const s = new MemorySink().createIndex('i').createField('i', 'f').createField('i', 'v', 'int');
  const calls: string[] = [];
  for (let shard = 0; shard < n; shard++)
    calls.push(`Set(${shard * SHARD_WIDTH + 1}, f=1) Set(${shard * SHARD_WIDTH + 2}, v=${shard})`);
  run(s, 'i', calls.join(' '));
  return s;
}

describe('executeQueryAsync', () => {
  it('answers like the synchronous executor', async () => {
    const s = fixture();
    const pql =
      'Row(s=10) Count(Union(Row(s=10), Row(b=false))) TopN(s) Rows(s) GroupBy(Rows(s), Rows(b)) Sum(field=n) MinRow(field=s) Options(Row(s=10), shards=[0]) Row(n > 0)';
    const q = parse(pql);
    const sync = executeQuery(s.holder, 'i', q, defaultOpts, NOW);
    expect(await executeQueryAsync(s.holder, 'i', q, defaultOpts, { now: NOW, sliceMs: 0 })).toEqual(sync);
    expect(await runQueryAsync(s.holder, 'i', q, defaultOpts, { now: NOW })).toEqual(sync);
  });

  it('yields to the event loop between shards', async () => {
    const s = manyShards(40);
    // An immediate that re-arms itself runs once per event-loop turn: it can only count while the
    // query is waiting on the loop (a 1 ms interval could miss a query that yields but ends
    // within a millisecond, as it does on a fast machine).
    let ticks = 0;
    let stopped = false;
    const tick = (): void => {
      if (stopped) return;
      ticks++;
      setImmediate(tick);
    };
    setImmediate(tick);
    try {
      const r = await executeQueryAsync(s.holder, 'i', parse('Count(Row(f=1)) Sum(field=v)'), defaultOpts, {
        sliceMs: 0,
      });
      expect(r.results).toEqual([
        { type: 'count', n: 40 },
        { type: 'valcount', value: 780n, count: 40 },
      ]);
    } finally {
      stopped = true;
    }
    expect(ticks).toBeGreaterThan(0);
  });

  it('reads requests that arrived during a slice before it runs the next one', async () => {
    // A query starts from a request callback (the loop's poll phase). Its first yield must pass
    // through a poll phase too: a setImmediate made there fires before any new request is read.
    const s = manyShards(40);
    const server = createServer();
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const [sock] = await accepted;
    const events: string[] = [];
    try {
      const answered = new Promise((resolve, reject) => {
        sock.once('data', () => {
          sock.on('data', () => events.push('request'));
          const q = executeQueryAsync(s.holder, 'i', parse('Count(Row(f=1))'), defaultOpts, {
            sliceMs: 0,
            version: () => {
              events.push('version');
              return 0;
            },
          });
          client.write('second request'); // in the server socket's buffer at once (loopback)
          q.then(resolve, reject);
        });
      });
      client.write('first request');
      expect(await answered).toEqual({ results: [{ type: 'count', n: 40 }] });
    } finally {
      client.destroy();
      server.close();
    }
    // version() is read once at the start, then at every resume.
    expect(events.slice(0, 3)).toEqual(['version', 'request', 'version']);
  });

  it('restarts when a write lands while it waits, so the answer reflects one state', async () => {
    const s = manyShards(40);
    // A write into shard 0 (already counted) after the first yield: a torn answer would be 40.
    setImmediate(() => run(s, 'i', 'Set(3, f=1)'));
    const r = await executeQueryAsync(s.holder, 'i', parse('Count(Row(f=1))'), defaultOpts, { sliceMs: 0 });
    expect(r.results).toEqual([{ type: 'count', n: 41 }]);
  });

  it('runs a Count of a few rows over a few shards straight through, a larger one sliced', async () => {
    const s = manyShards(40);
    let reads = 0;
    const version = (): number => {
      reads++;
      return 0;
    };
    // 2 rows × 20 shards = 40 row reads: unsliced, the state version is never read.
    const small = parse('Count(Intersect(Row(f=1), Row(f=1)))');
    const opts20 = { ...defaultOpts, shards: Array.from({ length: 20 }, (_, i) => i) };
    const r = await executeQueryAsync(s.holder, 'i', small, opts20, { version });
    expect(r).toEqual(executeQuery(s.holder, 'i', small, opts20, NOW));
    expect(r.results).toEqual([{ type: 'count', n: 20 }]);
    expect(reads).toBe(0);
    // 2 rows × 40 shards = 80 row reads: sliced (the version is read at the start).
    const all = await executeQueryAsync(s.holder, 'i', small, defaultOpts, { version });
    expect(all.results).toEqual([{ type: 'count', n: 40 }]);
    expect(reads).toBeGreaterThan(0);
  });

  it('ends a small unsliced Count past its deadline with the deadline error', async () => {
    const s = manyShards(4);
    // A clock that moves 1 s at every reading: the deadline (1 ms) has passed once the work is done.
    let t = 0;
    const clock = { ...systemClock, now: () => t, monotonic: () => t++ * 1000 };
    const budget = queryBudget(1, undefined, clock);
    await expect(executeQueryAsync(s.holder, 'i', parse('Count(Row(f=1))'), defaultOpts, { budget })).rejects.toThrow(
      /query timeout/,
    );
  });

  it('finishes synchronously after too many restarts', async () => {
    const s = manyShards(10);
    let v = 0;
    const r = await executeQueryAsync(s.holder, 'i', parse('Count(Row(f=1))'), defaultOpts, {
      sliceMs: 0,
      version: () => v++,
      maxRestarts: 2,
    });
    expect(r.results).toEqual([{ type: 'count', n: 10 }]);
  });

  it('rejects writes and reports validation errors', async () => {
    const s = fixture();
    await expect(executeQueryAsync(s.holder, 'i', parse('Set(1, s=1)'), defaultOpts)).rejects.toThrow(
      'not allowed in a read-only query',
    );
    await expect(executeQueryAsync(s.holder, 'i', parse('Row(zz=1)'), defaultOpts)).rejects.toThrow(
      'executing: map reduce: field not found',
    );
  });
});
