// Random series of writes mixing small and huge column IDs (near 2^32, 2^53, 2^63 and, by import,
// 2^64) — PQL Set/Clear and protobuf imports — against a naive model of BigInt sets: every row,
// count and export answers exactly what the model holds.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

const PB = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };
const near = (base: bigint, max: bigint) => fc.bigInt({ min: base - 3n, max: base + 3n > max ? max : base + 3n });
/** Columns PQL can name (up to 2^63 − 1), and imports (any uint64). */
const pqlCol = fc.oneof(
  fc.bigInt({ min: 0n, max: 3n * 2n ** 20n }),
  near(2n ** 32n, 2n ** 63n - 1n),
  near(2n ** 53n, 2n ** 63n - 1n),
  near(2n ** 63n - 4n, 2n ** 63n - 1n),
);
const importCol = fc.oneof(pqlCol, near(2n ** 64n - 4n, 2n ** 64n - 1n));
const row = fc.integer({ min: 0, max: 2 });
type Op = { kind: 'set' | 'clear'; row: number; col: bigint } | { kind: 'import'; row: number; cols: bigint[] };
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), row, col: pqlCol }),
  fc.record({ kind: fc.constant('clear' as const), row, col: pqlCol }),
  fc.record({ kind: fc.constant('import' as const), row, cols: fc.array(importCol, { minLength: 1, maxLength: 4 }) }),
);

let s: TestServer;
let n = 0;
beforeAll(async () => {
  s = await startServer();
});
afterAll(() => stopServer(s));

async function post(url: string, payload: string | Uint8Array, headers = {}): Promise<string> {
  const r = await s.app.inject({
    method: 'POST',
    url,
    payload: typeof payload === 'string' ? payload : Buffer.from(payload),
    headers,
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.body;
}

/** The column lists of a JSON response, read as exact integers (JSON.parse would round them). */
const columnLists = (body: string): bigint[][] =>
  [...body.matchAll(/"columns":\[([\d,]*)\]/g)].map((m) => (m[1] === '' ? [] : m[1].split(',').map(BigInt)));

describe('huge and small column IDs against a naive model', () => {
  it('Row, Count and Shift answer the model after random writes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), async (ops) => {
        const index = `p${n++}`;
        await post(`/index/${index}`, '');
        await post(`/index/${index}/field/f`, '');
        const model = [new Set<bigint>(), new Set<bigint>(), new Set<bigint>()];
        for (const o of ops) {
          if (o.kind === 'import') {
            // One request per shard, as clients send them.
            for (const shard of new Set(o.cols.map((c) => c >> 20n))) {
              const cols = o.cols.filter((c) => c >> 20n === shard);
              const body = encodeImportRequest({
                index,
                field: 'f',
                shard: Number(shard),
                rowIds: cols.map(() => o.row),
                columnIds: cols,
              });
              await post(`/index/${index}/field/f/import`, body, PB);
            }
            for (const c of o.cols) model[o.row].add(c);
          } else {
            const changed = await post(
              `/index/${index}/query`,
              `${o.kind === 'set' ? 'Set' : 'Clear'}(${o.col}, f=${o.row})`,
            );
            const had = model[o.row].has(o.col);
            expect(changed).toContain(o.kind === 'set' ? String(!had) : String(had));
            if (o.kind === 'set') model[o.row].add(o.col);
            else model[o.row].delete(o.col);
          }
        }
        const sorted = (xs: Iterable<bigint>) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const body = await post(`/index/${index}/query`, 'Row(f=0) Row(f=1) Row(f=2) Shift(Row(f=0), n=1)');
        expect(columnLists(body)).toEqual([
          ...model.map(sorted),
          sorted([...model[0]].map((c) => c + 1n).filter((c) => c < 2n ** 64n)),
        ]);
        const counts = await post(`/index/${index}/query`, 'Count(Row(f=0)) Count(Row(f=1)) Count(Row(f=2))');
        expect(counts.trim()).toBe(`{"results":[${model.map((m) => m.size).join(',')}]}`);
      }),
      { numRuns: 30 },
    );
  });
});
