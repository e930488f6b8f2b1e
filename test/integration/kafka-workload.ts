// A mixed write workload for the mirror/replica tests (not a test file itself): schema changes,
// sets, clears, ClearRow/Store, attrs, bulk imports (one large enough to be chunked in the
// mirror topic), int values, keyed indexes and fields. Also the read queries both sides answer.
import { expect } from 'vitest';
import type { Server } from '../../src/app.js';
import { stateDigest } from '../../src/state/digest.js';
import { http, ok, waitFor } from './kafka-support.js';

type Target = Server | string;

export async function createSchema(t: Target): Promise<void> {
  await ok(t, 'POST', '/index/i1', { options: { trackExistence: true } });
  await ok(t, 'POST', '/index/i1/field/s', {});
  await ok(t, 'POST', '/index/i1/field/m', { options: { type: 'mutex' } });
  await ok(t, 'POST', '/index/i1/field/b', { options: { type: 'bool' } });
  await ok(t, 'POST', '/index/i1/field/n', { options: { type: 'int', min: -1000, max: 1000000 } });
  await ok(t, 'POST', '/index/i1/field/t', { options: { type: 'time', timeQuantum: 'YMD' } });
  await ok(t, 'POST', '/index/i1/field/k', { options: { keys: true } });
  await ok(t, 'POST', '/index/i1/field/gone', {});
  await ok(t, 'POST', '/index/i2', { options: { keys: true } });
  await ok(t, 'POST', '/index/i2/field/f', { options: { keys: true } });
  await ok(t, 'POST', '/index/i2/field/v', { options: { type: 'int', min: 0, max: 1000 } });
  await ok(t, 'POST', '/index/tmp', {});
}

/** One round of writes; `r` varies the data so rounds differ. */
export async function writeRound(t: Target, r: number): Promise<void> {
  const base = r * 1000;
  const q = (index: string, pql: string): Promise<unknown> => ok(t, 'POST', `/index/${index}/query`, pql);
  await q('i1', `Set(${base + 1}, s=1) Set(${base + 2}, s=1) Set(${base + 1048577}, s=2) Set(${base + 3}, s=${r % 5})`);
  await q('i1', `Set(${base + 5}, m=3) Set(${base + 5}, m=4) Set(${base + 7}, b=true) Set(${base + 8}, b=false)`);
  await q(
    'i1',
    `Set(${base + 9}, n=${42 + r}) Set(${base + 10}, n=-7) Set(${base + 3}, t=1, 2019-01-0${(r % 9) + 1}T03:04)`,
  );
  await q('i1', `Set(${base + 4}, k="alpha") Set(${base + 6}, k="beta-${r}") Clear(${base + 2}, s=1)`);
  await q('i1', `SetRowAttrs(s, 1, color="red", round=${r}) SetColumnAttrs(${base + 1}, name="x${r}")`);
  await q('i1', `Set(${base + 11}, gone=1)`);
  await q('i2', `Set("user-${r}", f="red") Set("user-${r + 1}", f="blue") Set("user-${r}", v=${r % 1000})`);
  // JSON imports: bits, int values, keyed columns and rows.
  const cols = Array.from({ length: 200 }, (_, i) => base * 7 + i * 13);
  await ok(t, 'POST', '/index/i1/field/s/import', { rowIDs: cols.map((c) => c % 4), columnIDs: cols });
  await ok(t, 'POST', '/index/i1/field/n/import', { columnIDs: cols, values: cols.map((c) => c % 997) });
  await ok(t, 'POST', '/index/i2/field/f/import', {
    rowKeys: cols.map((c) => `r${c % 3}`),
    columnKeys: cols.map((c) => `c${c}`),
  });
  await ok(t, 'POST', '/index/i1/field/s/import?clear=true', { rowIDs: [0, 1], columnIDs: [cols[0], cols[1]] });
  if (r % 3 === 2) await q('i1', `ClearRow(s=${r % 5})`);
  if (r % 4 === 1) await q('i1', `Store(Row(s=1), s=9)`);
}

/** A single import whose log record is larger than a mirror chunk (256 KiB). */
export async function bigImport(t: Target, seed: number): Promise<void> {
  let x = seed | 1;
  const rnd = (): number => {
    // xorshift32: the low bits of an LCG are far from random.
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return x >>> 0;
  };
  const cols: number[] = [];
  for (let i = 0; i < 200_000; i++) cols.push(rnd() % 1048576);
  await ok(t, 'POST', '/index/i1/field/s/import', { rowIDs: cols.map((_, i) => 10 + (i % 3)), columnIDs: cols });
}

export async function schemaChanges(t: Target): Promise<void> {
  await ok(t, 'DELETE', '/index/i1/field/gone');
  await ok(t, 'POST', '/index/i1/field/gone', { options: { type: 'mutex' } });
  await ok(t, 'POST', '/index/i1/query', 'Set(77, gone=2)');
  await ok(t, 'DELETE', '/index/tmp');
}

/** Read queries whose answers must match between primary and replica. */
export const QUERIES: [string, string][] = [
  ['i1', 'Row(s=1)'],
  ['i1', 'Count(Row(s=0))'],
  ['i1', 'Count(Row(s=10))'],
  ['i1', 'Row(s=9)'],
  ['i1', 'Row(m=4)'],
  ['i1', 'Row(b=true)'],
  ['i1', 'Sum(field=n)'],
  ['i1', 'Row(n > 40)'],
  ['i1', 'Row(t=1, from=2019-01-01T00:00, to=2019-01-05T00:00)'],
  ['i1', 'Row(k="alpha")'],
  ['i1', 'TopN(s, n=5)'],
  ['i1', 'Count(Not(Row(s=1)))'],
  ['i1', 'Row(gone=2)'],
  ['i2', 'Row(f="red")'],
  ['i2', 'Sum(field=v)'],
];

/** Waits until the replica applied everything the primary committed. */
export async function caughtUp(primary: Server, replica: Server, timeoutMs = 45_000): Promise<void> {
  await waitFor(
    `replica at primary seq ${primary.engine.committedLog.durableSeq}`,
    () => replica.engine.appliedSeq === primary.engine.committedLog.durableSeq,
    timeoutMs,
  );
}

/** Same state (digest), same answers to QUERIES, same schema. */
export async function sameAnswers(primary: Server, replica: Server): Promise<void> {
  expect(replica.engine.peekApplied(stateDigest)).toBe(primary.engine.peekApplied(stateDigest));
  // TopN reads ranked caches, refreshed on a timer: refresh both so they see the same data.
  await ok(primary, 'POST', '/recalculate-caches');
  await ok(replica, 'POST', '/recalculate-caches');
  for (const [index, pql] of QUERIES) {
    const a = await http(primary, 'POST', `/index/${index}/query`, pql);
    const b = await http(replica, 'POST', `/index/${index}/query`, pql);
    expect(a.status, `${pql} on the primary: ${a.body}`).toBe(200);
    expect({ pql, body: b.body }).toEqual({ pql, body: a.body });
  }
  expect((await ok(replica, 'GET', '/schema')).body).toBe((await ok(primary, 'GET', '/schema')).body);
}
