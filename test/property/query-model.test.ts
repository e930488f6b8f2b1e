// Differential test: random schemas, random write requests and random nested queries run
// through the real parser + runQuery + executor, and through a naive model (plain sets and
// maps). Every result must match exactly; so must an async run and a replay of the logged events
// into a fresh holder.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { executeQueryAsync, recalculateCaches } from '../../src/executor/index.js';
import { parse } from '../../src/pql/index.js';
import { apply } from '../../src/events/apply.js';
import { Holder } from '../../src/state/holder.js';
import { MemorySink } from '../helpers/memory-sink.js';
import { NOW, defaultOpts, run, toJson } from '../unit/executor/harness.js';
import { expected, renderQuery } from '../unit/executor/oracle-queries.js';
import { applyWrites, arbs, schemaArb, setup } from './query-model-cases.js';

describe('query model (differential)', () => {
  // 1,000 random cases are CPU work alone: 65–104 s beside other engineers' test runs on 2 cores
  // (load 30), so the bound is generous: a loaded machine makes it slower, never wrong.
  it('executor and naive model agree on random schemas, writes and queries', { timeout: 400_000 }, () => {
    fc.assert(
      fc.property(
        schemaArb.chain((schema) => {
          const a = arbs(schema);
          return fc.record({ schema: fc.constant(schema), writes: a.writes, queries: a.queries });
        }),
        ({ schema, writes, queries }) => {
          const { sink, model } = setup(schema);
          for (const batch of writes) applyWrites(sink, model, batch);
          // Replaying the log into a fresh holder must give the same answers: events are
          // self-contained (no live fragment rows inside them).
          const replay = new Holder();
          let replayed = 0;
          for (const q of queries) {
            recalculateCaches(sink.holder);
            const pql = renderQuery(schema, q);
            const want = expected(model, q);
            expect({ pql, got: run(sink, 'i', pql).results.map(toJson)[0] }).toEqual({ pql, got: want });
            if (q.k === 'store') continue;
            for (; replayed < sink.events.length; replayed++) apply(replay, sink.events[replayed]);
            recalculateCaches(replay);
            const again = run(new MemorySink(replay), 'i', pql).results.map(toJson)[0];
            expect({ pql, replay: again }).toEqual({ pql, replay: want });
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('the async executor agrees with the model too', async () => {
    await fc.assert(
      fc.asyncProperty(
        schemaArb.chain((schema) => {
          const a = arbs(schema);
          return fc.record({
            schema: fc.constant(schema),
            writes: a.writes,
            queries: a.queries.map((qs) => qs.filter((q) => q.k !== 'store')),
          });
        }),
        async ({ schema, writes, queries }) => {
          const { sink, model } = setup(schema);
          for (const batch of writes) applyWrites(sink, model, batch);
          recalculateCaches(sink.holder);
          const pql = queries.map((q) => renderQuery(schema, q)).join(' ');
          const r = await executeQueryAsync(sink.holder, 'i', parse(pql), defaultOpts, { now: NOW, sliceMs: 0 });
          expect({ pql, got: r.results.map(toJson) }).toEqual({ pql, got: queries.map((q) => expected(model, q)) });
        },
      ),
      { numRuns: 200 },
    );
  });
});
