// The query workers against the naive model: the query model's random schemas, writes and
// nested queries (query-model-cases.ts), each case's state published to two real worker threads
// as the engine publishes it (engine/frozen-feed.ts), and every query that the workers take
// (service/query-workers/offload.ts) answered by them, merged and finalized on this thread,
// must equal the model's answer, both with this thread computing the first share
// (here-share.ts) and with the workers alone. Then a few random writes more, published as deltas, and the
// queries again: a worker's picture follows the state, not only its first publication.
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrozenFeed } from '../../src/engine/frozen-feed.js';
import type { StatePublisher } from '../../src/engine/ports.js';
import { queryBudget } from '../../src/executor/index.js';
import { parse } from '../../src/pql/index.js';
import type { Publication } from '../../src/state/published.js';
import { workerRead } from '../../src/service/query-workers/offload.js';
import { QueryWorkers } from '../../src/service/query-workers/pool.js';
import { systemClock } from '../../src/util/clock.js';
import { defaultFieldOptions } from '../../src/domain/types.js';
import { apply } from '../../src/events/apply.js';
import { Holder } from '../../src/state/holder.js';
import { NOW, defaultOpts, toJson } from '../unit/executor/harness.js';
import { expected, renderQuery } from '../unit/executor/oracle-queries.js';
import { applyWrites, arbs, schemaArb, setup } from './query-model-cases.js';

/** Hands the pool whatever the test queued, as the engine hands it durable publications. */
class QueuedPublisher implements StatePublisher {
  readonly queue: Publication[] = [];
  enabled = true;
  enable(): Publication {
    return { seq: 0, layout: [], fragments: [] };
  }
  durable(): Publication[] {
    return this.queue.splice(0);
  }
  /** The test publishes each case's state whole, and its writes once applied. */
  get handedOut(): boolean {
    return this.queue.length === 0;
  }
}

const publisher = new QueuedPublisher();
let pool: QueryWorkers;
const clock = { ...systemClock, now: () => NOW };
let spread = 0;

beforeAll(async () => {
  pool = QueryWorkers.start(2, publisher, pino({ level: 'silent' }));
  await pool.whenReady();
  // The cases' states are tiny: every read the workers can take goes to them.
  pool.minWorkBits = 0;
  // Idle workers always share (these small reads would soon run on the request thread alone).
  pool.adaptShare = false;
});
afterAll(async () => {
  await pool?.close();
});

async function viaWorkers(holder: Parameters<typeof workerRead>[1], pql: string): Promise<unknown[] | undefined> {
  // Reads the workers do not take are answered on this thread: only the workers' are compared.
  const jobs = pool.stats.jobs;
  const r = workerRead(pool, holder, 'i', parse(pql), defaultOpts, queryBudget(0, undefined, clock));
  if (pool.stats.jobs === jobs) {
    await r.catch(() => undefined);
    return undefined;
  }
  spread++;
  return (await r).results.map(toJson);
}

describe('query workers (differential)', () => {
  it('answer as the naive model on random schemas, writes and queries, before and after more writes', async () => {
    await fc.assert(
      fc.asyncProperty(
        schemaArb.chain((schema) => {
          const a = arbs(schema);
          return fc.record({
            schema: fc.constant(schema),
            writes: a.writes,
            more: a.writes,
            queries: a.queries.map((qs) => qs.filter((q) => q.k !== 'store')),
          });
        }),
        async ({ schema, writes, more, queries }) => {
          const { sink, model } = setup(schema);
          const feed = new FrozenFeed(sink.holder);
          for (const batch of writes) applyWrites(sink, model, batch);
          // The whole state replaces whatever the workers held from the previous case.
          publisher.queue.push(feed.enable());
          for (const round of [0, 1]) {
            if (round === 1) {
              for (const batch of more) {
                applyWrites(sink, model, batch);
                feed.capture(sink.holder.appliedSeq);
              }
              publisher.queue.push(...feed.takeDurable(sink.holder.appliedSeq));
            }
            // The request thread computing the first share (here-share.ts), then the workers alone.
            for (const q of queries)
              for (const here of [true, false]) {
                pool.shareHere = here;
                const pql = renderQuery(schema, q);
                const got = await viaWorkers(sink.holder, pql);
                if (got !== undefined)
                  expect({ pql, round, here, got: got[0] }).toEqual({ pql, round, here, got: expected(model, q) });
              }
          }
        },
      ),
      { numRuns: 150 },
    );
    // Many cases are spread (unkeyed indexes over more than one shard): the property is not vacuous.
    expect(spread).toBeGreaterThan(75);
    expect(pool.stats.sharedHere).toBeGreaterThan(75);
    // Generous: a few seconds on an idle machine, minutes on a loaded one.
  }, 600_000);
});

describe('query workers (timelines)', () => {
  it('a traced shared read marks each thread: the shards they took add up to the read, in order of the moments', async () => {
    const h = new Holder();
    apply(h, { type: 'IndexCreated', index: 't', options: { keys: false, trackExistence: false } });
    apply(h, { type: 'FieldCreated', index: 't', field: 'f', options: defaultFieldOptions('set') });
    const shards = 40;
    for (let s = 0; s < shards; s++)
      apply(h, {
        type: 'BitsSet',
        index: 't',
        field: 'f',
        view: 'standard',
        shard: s,
        rows: [1, 2],
        columns: [Uint32Array.of(1, 2, 3), Uint32Array.of(2, 3, 4)],
      });
    publisher.queue.push(new FrozenFeed(h).enable());
    pool.shareHere = true;
    pool.timelines = [];
    try {
      for (let i = 0; i < 5; i++) {
        const r = await workerRead(
          pool,
          h,
          't',
          parse('Count(Intersect(Row(f=1), Row(f=2)))'),
          defaultOpts,
          queryBudget(0),
        );
        expect(r.results).toEqual([{ type: 'count', n: 2 * shards }]);
      }
      expect(pool.timelines).toHaveLength(5);
      for (const t of pool.timelines) {
        const w = t.workers[0];
        expect(t.here.shards + w.shards).toBe(shards);
        const at = t.at;
        expect([at.begin, at.compiled, at.boarded, at.posted, at.hereDone, at.answers, at.finalized]).toEqual(
          [at.begin, at.compiled, at.boarded, at.posted, at.hereDone, at.answers, at.finalized].sort((a, b) => a - b),
        );
        // The request thread claims its first chunk before it posts the job.
        expect(t.here.firstChunk).toBeGreaterThanOrEqual(at.boarded);
        if (w.shards > 0) {
          expect(w.received).toBeDefined();
          expect(w.firstChunk).toBeGreaterThanOrEqual(w.received ?? Number.NaN);
          expect(w.posted).toBeGreaterThanOrEqual(w.lastChunk ?? Number.NaN);
        }
      }
    } finally {
      pool.timelines = undefined;
    }
  });
});
