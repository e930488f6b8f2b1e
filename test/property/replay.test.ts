// Property: for random event sequences, live state == state replayed from the whole log ==
// state from snapshot + log suffix. Real LevelDB, real snapshot files, the real engine.
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DEFAULTS } from '../../src/config/config.js';
import { createServer } from '../../src/app.js';
import { bootstrap } from '../../src/engine/bootstrap.js';
import type { SnapshotFiles } from '../../src/engine/ports.js';
import type { Event } from '../../src/events/types.js';
import { defaultFieldOptions, type FieldType } from '../../src/domain/types.js';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import type { Holder } from '../../src/state/holder.js';
import { stateDigest } from '../../src/state/digest.js';
import { EventLog } from '../../src/storage/index.js';
import { removeDir, tempDir } from '../helpers/server.js';

const silent = pino({ level: 'silent' });
const INDEXES = ['a', 'b'];
const FIELDS = ['f', 'g', 'n'];
const TYPES: FieldType[] = ['set', 'mutex', 'time', 'int', 'bool'];

type Cmd =
  | { k: 'index'; i: number; track: boolean; keys: boolean }
  | { k: 'dropIndex'; i: number }
  | { k: 'field'; i: number; f: number; t: number }
  | { k: 'dropField'; i: number; f: number }
  | { k: 'bits'; i: number; f: number; clear: boolean; shard: number; rows: number[]; cols: number[] }
  | { k: 'clearRow'; i: number; f: number; row: number }
  | { k: 'values'; i: number; shard: number; cols: number[]; vals: bigint[] }
  | { k: 'keys'; i: number; n: number }
  | { k: 'attrs'; i: number; f: number; id: number; v: number | null }
  | { k: 'snapshot' };

const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  fc.record({ k: fc.constant('index' as const), i: fc.nat(1), track: fc.boolean(), keys: fc.boolean() }),
  fc.record({ k: fc.constant('dropIndex' as const), i: fc.nat(1) }),
  fc.record({ k: fc.constant('field' as const), i: fc.nat(1), f: fc.nat(2), t: fc.nat(4) }),
  fc.record({ k: fc.constant('dropField' as const), i: fc.nat(1), f: fc.nat(2) }),
  fc.record({ k: fc.constant('bits' as const), i: fc.nat(1), f: fc.nat(2), clear: fc.boolean(), shard: fc.nat(2), rows: fc.array(fc.nat(5), { minLength: 1, maxLength: 3 }), cols: fc.array(fc.nat(2_000_000), { minLength: 1, maxLength: 20 }) }),
  fc.record({ k: fc.constant('clearRow' as const), i: fc.nat(1), f: fc.nat(2), row: fc.nat(5) }),
  fc.record({ k: fc.constant('values' as const), i: fc.nat(1), shard: fc.nat(1), cols: fc.array(fc.nat(1_000_000), { minLength: 1, maxLength: 10 }), vals: fc.array(fc.bigInt({ min: -(1n << 62n), max: 1n << 62n }), { minLength: 10, maxLength: 10 }) }),
  fc.record({ k: fc.constant('keys' as const), i: fc.nat(1), n: fc.integer({ min: 1, max: 4 }) }),
  fc.record({ k: fc.constant('attrs' as const), i: fc.nat(1), f: fc.nat(2), id: fc.nat(10), v: fc.option(fc.integer(), { nil: null }) }),
  fc.constant({ k: 'snapshot' as const }),
);

/** Turns a command into events valid for the current state (or none). */
function decide(h: Holder, c: Cmd, counter: { n: number }): Event[] {
  if (c.k === 'snapshot') return [];
  const index = INDEXES[c.i];
  const idx = h.index(index);
  if (c.k === 'index') return idx ? [] : [{ type: 'IndexCreated', index, options: { keys: c.keys, trackExistence: c.track } }];
  if (!idx) return [];
  switch (c.k) {
    case 'dropIndex':
      return [{ type: 'IndexDeleted', index }];
    case 'field': {
      const field = FIELDS[c.f];
      if (idx.field(field)) return [];
      const type = field === 'n' ? 'int' : TYPES[c.t] === 'int' ? 'set' : TYPES[c.t];
      const options = { ...defaultFieldOptions(type), ...(type === 'time' ? { timeQuantum: 'YMD' } : {}) };
      return [{ type: 'FieldCreated', index, field, options }];
    }
    case 'dropField':
      return idx.field(FIELDS[c.f]) ? [{ type: 'FieldDeleted', index, field: FIELDS[c.f] }] : [];
    case 'bits': {
      const field = FIELDS[c.f];
      if (!idx.field(field) || field === 'n') return [];
      const offsets = c.cols.map((x) => x % 1048576);
      return [{ type: c.clear ? 'BitsCleared' : 'BitsSet', index, field, view: 'standard', shard: c.shard, rows: [...new Set(c.rows)], columns: [...new Set(c.rows)].map(() => new RoaringBitmap32(offsets)) }];
    }
    case 'clearRow':
      return idx.field(FIELDS[c.f]) ? [{ type: 'RowCleared', index, field: FIELDS[c.f], row: c.row }] : [];
    case 'values': {
      if (!idx.field('n')) return [];
      const m = new Map<number, bigint>();
      c.cols.forEach((col, j) => m.set(col, c.vals[j]));
      return [{ type: 'ValuesSet', index, field: 'n', shard: c.shard, columns: Uint32Array.from(m.keys()), values: BigInt64Array.from(m.values()) }];
    }
    case 'keys': {
      const keys = Array.from({ length: c.n }, () => `k${counter.n++}`);
      return [{ type: 'KeysAssigned', index, field: '', firstId: idx.columnKeys.nextId, keys }];
    }
    case 'attrs': {
      const field = FIELDS[c.f];
      if (!idx.field(field)) return [];
      const v = c.v === null ? null : BigInt(c.v);
      return [
        { type: 'RowAttrsSet', index, field, row: c.id, attrs: { x: v, s: c.v === null ? null : `v${c.v}` } },
        { type: 'ColumnAttrsSet', index, column: c.id, attrs: { flag: c.v === null ? null : c.v > 0, f: c.v === null ? null : c.v / 2 } },
      ];
    }
  }
}

const noSnapshots: SnapshotFiles = {
  write: () => Promise.reject(new Error('read-only')),
  list: () => Promise.resolve([]),
  infos: () => Promise.resolve([]),
  read: () => Promise.reject(new Error('none')),
  prune: () => Promise.resolve(),
};

describe('replay equivalence', () => {
  it('live == full replay == snapshot + suffix', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(cmd, { minLength: 5, maxLength: 60 }), async (cmds) => {
        const dataDir = tempDir('bitledger-prop-');
        try {
          const server = await createServer({ ...DEFAULTS, dataDir, bind: '127.0.0.1:0', snapshotEveryEvents: 1e9 }, silent, (e) => {
            throw e;
          });
          const counter = { n: 0 };
          for (const c of cmds) {
            if (c.k === 'snapshot') await server.engine.snapshot();
            else await server.engine.write((h, sink) => decide(h, c, counter).forEach((e) => sink.emit(e)));
          }
          const live = server.engine.peekApplied(stateDigest);
          await server.close();

          // Snapshot (if any) + suffix, the normal startup path.
          const again = await createServer({ ...DEFAULTS, dataDir, bind: '127.0.0.1:0' }, silent, (e) => {
            throw e;
          });
          expect(again.engine.peekApplied(stateDigest)).toBe(live);
          await again.close();

          // The whole log, ignoring snapshots (nothing was released: at most one snapshot is
          // older than the newest, and release keeps the log since the previous one).
          const log = await EventLog.open(dataDir, { fsync: 'always', logger: silent });
          try {
            if (log.firstSeq <= 1) {
              const { holder } = await bootstrap(log, noSnapshots, silent);
              expect(stateDigest(holder)).toBe(live);
            }
          } finally {
            await log.close();
          }
        } finally {
          removeDir(dataDir);
        }
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});
