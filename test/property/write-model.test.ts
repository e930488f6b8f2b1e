// Property: PQL writes and imports follow one write model (service/write-model/). A random series
// of Set/Clear through PQL, one bit per request, and the same series as imports (each run of
// consecutive sets or clears one request) leave the same state digest — on set, mutex, bool and
// time fields, with existence tracking, with and without string keys. Real engines on LevelDB.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARD_WIDTH } from '../../src/domain/shard.js';
import { ImportService } from '../../src/service/import/import-service.js';
import { QueryService } from '../../src/service/query-service.js';
import { SchemaService, parseFieldBody } from '../../src/service/schema-service.js';
import { stateDigest } from '../../src/state/digest.js';
import { startServer, stopServer, type TestServer } from '../helpers/server.js';

type FieldKind = 'set' | 'mutex' | 'bool' | 'time';

interface Op {
  clear: boolean;
  row: number;
  col: number;
  /** Milliseconds; time fields only. */
  ms?: number;
}

interface Case {
  kind: FieldKind;
  keys: boolean;
  ops: Op[];
}

const DAY = 86_400_000;
const EPOCH_2019 = Date.UTC(2019, 0, 1);

const caseArb: fc.Arbitrary<Case> = fc
  .record({ kind: fc.constantFrom<FieldKind>('set', 'mutex', 'bool', 'time'), keys: fc.boolean() })
  .chain(({ kind, keys }) => {
    const op = fc.record({
      // An import clear writes the standard view only (Pilosa's import), a PQL Clear every view:
      // the two differ on purpose for time fields, so their series are sets only.
      clear: kind === 'time' ? fc.constant(false) : fc.boolean(),
      row: kind === 'bool' ? fc.nat(1) : fc.nat(3),
      col: fc.tuple(fc.nat(2), fc.nat(5)).map(([shard, off]) => shard * SHARD_WIDTH + off),
      ms:
        kind === 'time'
          ? fc.option(
              fc.nat(40).map((d) => EPOCH_2019 + d * DAY),
              { nil: undefined },
            )
          : fc.constant(undefined),
    });
    return fc.record({
      kind: fc.constant(kind),
      keys: fc.constant(keys),
      ops: fc.array(op, { minLength: 1, maxLength: 30 }),
    });
  });

/** Keyed indexes and fields name columns and rows by strings (bool fields have no row keys). */
const colRef = (c: Case, col: number): string => (c.keys ? JSON.stringify(`c${col}`) : String(col));
const rowKeyed = (c: Case): boolean => c.keys && c.kind !== 'bool';
const rowRef = (c: Case, row: number): string =>
  c.kind === 'bool' ? String(row === 1) : rowKeyed(c) ? JSON.stringify(`r${row}`) : String(row);

function pql(c: Case, op: Op): string {
  const args = `${colRef(c, op.col)}, f=${rowRef(c, op.row)}`;
  if (op.clear) return `Clear(${args})`;
  return op.ms === undefined ? `Set(${args})` : `Set(${args}, ${new Date(op.ms).toISOString().slice(0, 16)})`;
}

/** Consecutive ops of the same kind (all sets, or all clears). */
function runs(ops: Op[]): Op[][] {
  const out: Op[][] = [];
  for (const op of ops) {
    const last = out[out.length - 1];
    if (last !== undefined && last[0].clear === op.clear) last.push(op);
    else out.push([op]);
  }
  return out;
}

const fieldBody = (c: Case): unknown => ({
  options: {
    type: c.kind,
    ...(c.kind === 'time' ? { timeQuantum: 'YMD' } : {}),
    ...(rowKeyed(c) ? { keys: true } : {}),
  },
});

const NO_OPTIONS = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };

let viaPql: TestServer;
let viaImport: TestServer;

beforeAll(async () => {
  [viaPql, viaImport] = await Promise.all([startServer(), startServer()]);
});
afterAll(async () => {
  await stopServer(viaPql);
  await stopServer(viaImport);
});

describe('one write model for PQL and imports', () => {
  it('a series of Set/Clear and an import of the same bits give the same state', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const index = `w${run++}`;
        for (const s of [viaPql, viaImport]) {
          const schema = new SchemaService(s.engine);
          await schema.createIndex(index, { keys: c.keys, trackExistence: true });
          await schema.createField(index, 'f', parseFieldBody(fieldBody(c)));
        }
        const query = new QueryService(viaPql.engine);
        for (const op of c.ops) await query.execute(index, pql(c, op), NO_OPTIONS);
        const imports = new ImportService(viaImport.engine);
        for (const group of runs(c.ops)) {
          const keyedRows = rowKeyed(c);
          await imports.importBits({
            index,
            field: 'f',
            rowIds: keyedRows ? new Float64Array(0) : Float64Array.from(group.map((o) => o.row)),
            rowKeys: keyedRows ? group.map((o) => `r${o.row}`) : [],
            columnIds: c.keys ? new Float64Array(0) : Float64Array.from(group.map((o) => o.col)),
            columnKeys: c.keys ? group.map((o) => `c${o.col}`) : [],
            timestamps:
              c.kind === 'time'
                ? BigInt64Array.from(group.map((o) => (o.ms === undefined ? 0n : BigInt(o.ms) * 1_000_000n)))
                : null,
            clear: group[0].clear,
          });
        }
        const [a, b] = await Promise.all([viaPql.engine.read(stateDigest), viaImport.engine.read(stateDigest)]);
        // Each case leaves nothing behind, so a failing case does not fail the shrunk ones too.
        for (const s of [viaPql, viaImport]) await new SchemaService(s.engine).deleteIndex(index);
        expect(b).toBe(a);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
