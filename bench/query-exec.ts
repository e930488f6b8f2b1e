// Issue 3, query executor: Count(Intersect(Row(f=1), Row(f=2))) over 1, 16 and 256 shards at 1%,
// 10% and 50% density, run in-process by the PQL executor on a Holder built through apply(),
// against the raw sum of andCardinality over the very same bitmaps in the same run (interleaved
// rounds, best of each: the machine is shared).
import { parse } from '../src/pql/index.js';
import { runQuery, runQueryAsync } from '../src/service/query/index.js';
import { defaultFieldOptions } from '../src/domain/types.js';
import { apply } from '../src/events/apply.js';
import type { Bitmap } from '../src/roaring/bitmap.js';
import { Holder } from '../src/state/holder.js';
import type { EventSink } from '../src/events/types.js';
import type { QueryOptions, QueryResponse } from '../src/executor/result.js';
import { LIMITS } from '../src/config/limits.js';
import { bitmapPool } from './lib/bitmaps.js';
import type { Reporter } from './lib/report.js';
import { bestOfRounds } from './lib/stats.js';

const DENSITIES = [0.01, 0.1, 0.5];
const SHARD_COUNTS = [1, 16, 256];
const POOL = 6;
const PQL = 'Count(Intersect(Row(f=1), Row(f=2)))';
const OPTS: QueryOptions = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };
const LIMIT_OPTS = { maxWritesPerRequest: LIMITS.maxWritesPerRequest };
const NO_WRITES: EventSink = {
  emit: () => {
    throw new Error('a read query emitted an event');
  },
};

export async function runQueryExec(r: Reporter): Promise<void> {
  r.begin('query-exec', 'Count(Intersect) executor vs raw andCardinality, in-process (issue 3)');
  const query = parse(PQL);
  for (const density of DENSITIES) {
    const holder = buildHolder(density);
    for (const shards of SHARD_COUNTS) {
      const index = `s${shards}`;
      const pairs = rowPairs(holder, index);
      const raw = (): number => {
        let n = 0;
        for (const [a, b] of pairs) n += a.andCardinality(b);
        return n;
      };
      const expected = raw();
      const t = await bestOfRounds({
        raw,
        async: async () => check(await runQueryAsync(holder, index, query, OPTS), expected),
        sync: () => check(runQuery(holder, NO_WRITES, index, query, OPTS, LIMIT_OPTS), expected),
      });
      const [rawMs, asyncMs, syncMs] = [t.raw, t.async, t.sync];
      const at = `${shards} shard${shards > 1 ? 's' : ''}, ${density * 100}%`;
      r.figure(`raw andCardinality sum, ${at}`, rawMs * 1000, 'µs');
      r.figure(`executor (runQueryAsync), ${at}`, asyncMs * 1000, 'µs');
      r.figure(`executor (runQuery, sync), ${at}`, syncMs * 1000, 'µs');
      r.figure(`runQueryAsync / raw, ${at}`, asyncMs / rawMs, '×', { op: '<=', value: 1.2, source: 'issue 3' });
      r.figure(`runQuery / raw, ${at}`, syncMs / rawMs, '×', { op: '<=', value: 1.2, source: 'issue 3' });
    }
  }
}

function check(resp: QueryResponse, expected: number): void {
  const res = resp.results[0];
  if (res?.type !== 'count' || res.n !== expected)
    throw new Error(`executor answered ${JSON.stringify(res)}, raw andCardinality ${expected}`);
}

/** Indexes s1, s16, s256, each with rows 1 and 2 of field f at `density` in every shard. */
function buildHolder(density: number): Holder {
  const pool = bitmapPool(density, POOL);
  const h = new Holder();
  for (const shards of SHARD_COUNTS) {
    const index = `s${shards}`;
    apply(h, { type: 'IndexCreated', index, options: { keys: false, trackExistence: false } });
    apply(h, { type: 'FieldCreated', index, field: 'f', options: defaultFieldOptions('set') });
    for (let s = 0; s < shards; s++) {
      apply(h, {
        type: 'BitsSet',
        index,
        field: 'f',
        view: 'standard',
        shard: s,
        rows: [1, 2],
        columns: [pool[s % POOL], pool[(s + 1 + (s % 3)) % POOL]],
      });
    }
  }
  return h;
}

function rowPairs(h: Holder, index: string): [Bitmap, Bitmap][] {
  const view = h.index(index)?.field('f')?.view('standard');
  if (view === undefined) throw new Error(`no view in ${index}`);
  const out: [Bitmap, Bitmap][] = [];
  for (const frag of view.fragments.values()) {
    const a = frag.row(1);
    const b = frag.row(2);
    if (a !== undefined && b !== undefined) out.push([a, b]);
  }
  return out;
}
