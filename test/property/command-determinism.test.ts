// Issue 22, deterministic commands: applying a cluster command is a function of the command and
// the partition's state alone. The same random stream of commands (schema, PQL writes whose time
// ranges have no `to`, imports with timestamps, a field deleted and created again while writes to
// it are in flight, a time field's quantum changed while timestamped writes and reads of it are in
// flight) is applied by the real CommandApplier to two real LevelDB engines: once with
// the system clock at the coordinator's time, each message as soon as it was sent (a holder that
// keeps up), and once 30 days later with the meta topic applied to its end first (a replacement
// holder catching up, a restore). The two states must have the same digest. A holder that took
// "now" from its own clock would store different bits for `Store(Row(t=…, from=…), …)` (a missing
// `to` means now + 1 day), one that applied a write sent before a re-creation to the new
// field would keep bits the deletion removed, and one that wrote or read a time field with its
// current quantum instead of the quantum as of the command's meta offset would use other views.
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Command, LogCommand, MetaCommand } from '../../src/cluster/commands/command.js';
import { commandMessages } from '../../src/cluster/commands/command-codec.js';
import type { ClusterMessage, ClusterTopic } from '../../src/cluster/types.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { stateDigest } from '../../src/state/digest.js';
import { PARTITIONS, SET_FIELD, newApplier, openEngine, partitionOf } from '../integration/cluster-write-support.js';
import { removeDir } from '../helpers/temp.js';

const DAY = 86_400_000;
/** The coordinator's clock when it stamped every command. */
const STAMP = Date.UTC(2026, 5, 15, 12, 0);
const LATER = STAMP + 30 * DAY;
const SHARD = 1 << 20;
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) removeDir(d);
});

/** "2026-06-14T07:00" for a time `days` and `hours` after the stamp's day. */
function at(days: number, hours: number): string {
  return new Date(STAMP + days * DAY + hours * 3_600_000).toISOString().slice(0, 16);
}

const SCHEMA: MetaCommand[] = [
  { kind: 'schema', schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: true } } },
  { kind: 'schema', schema: { op: 'createField', index: 'i', field: 'f', options: SET_FIELD, extraIntFields: [] } },
  {
    kind: 'schema',
    schema: {
      op: 'createField',
      index: 'i',
      field: 't',
      options: { ...SET_FIELD, type: 'time', timeQuantum: 'YMDH' },
      extraIntFields: [],
    },
  },
];

const col = fc.record({ shard: fc.nat(3), offset: fc.nat(50) }).map((c) => c.shard * SHARD + c.offset);
const day = fc.integer({ min: -3, max: 40 });
const hour = fc.nat(23);

/**
 * One write: its PQL (or an import of timestamped bits), and the column that picks its partition;
 * or field f deleted and created again (two meta commands) while writes are in flight.
 */
type Write =
  | { pql: string; col: number }
  | { importCols: number[]; days: number[] }
  | { recreate: true }
  | { quantum: string };

const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ c: col, r: fc.nat(2), d: day, h: hour }).map((w) => ({
    pql: `Set(${w.c}, t=${w.r}, ${at(w.d, w.h)})`,
    col: w.c,
  })),
  fc.record({ c: col, r: fc.nat(2) }).map((w) => ({ pql: `Set(${w.c}, f=${w.r})`, col: w.c })),
  // A time range without `to`: it ends at "now" + 1 day, which must be the command's time.
  fc.record({ r: fc.nat(2), d: fc.integer({ min: -3, max: 0 }), to: fc.nat(2) }).map((w) => ({
    pql: `Store(Row(t=${w.r}, from=${at(w.d, 0)}), f=${w.to})`,
    col: -1,
  })),
  fc.record({ r: fc.nat(2) }).map((w) => ({ pql: `ClearRow(f=${w.r})`, col: -1 })),
  fc
    .array(fc.record({ c: fc.nat(50), d: day }), { minLength: 1, maxLength: 6 })
    .map((xs) => ({ importCols: xs.map((x) => x.c), days: xs.map((x) => x.d) })),
  fc.constant({ recreate: true as const }),
  // Field t's time quantum changed (a 0.x frame command) while timestamped writes and Store's
  // time-range reads of t are in flight: each is applied with t's quantum as of its meta offset.
  fc.constantFrom('YMDH', 'YM', 'Y', 'MD').map((quantum) => ({ quantum })),
);

const RECREATE: MetaCommand[] = [
  { kind: 'schema', schema: { op: 'deleteField', index: 'i', field: 'f' } },
  { kind: 'schema', schema: { op: 'createField', index: 'i', field: 'f', options: SET_FIELD, extraIntFields: [] } },
];

/**
 * The commands of one write, sent by a coordinator that had applied `metaOffset` meta messages:
 * one partition for a column, every partition for ClearRow/Store.
 */
function commandsOf(w: Exclude<Write, { recreate: true } | { quantum: string }>, metaOffset: number): LogCommand[] {
  const base = { index: 'i', metaOffset: String(metaOffset) };
  if ('importCols' in w) {
    const body = encodeImportRequest({
      index: 'i',
      field: 't',
      shard: 0,
      rowIds: w.importCols.map(() => 1),
      columnIds: w.importCols,
      timestamps: w.days.map((d) => BigInt(STAMP + d * DAY) * 1_000_000n),
    });
    return [{ kind: 'import', ...base, field: 't', shard: 0, format: 'bits', clear: false, body, partition: 0 }];
  }
  const parts = w.col >= 0 ? [partitionOf('i', Math.floor(w.col / SHARD))] : [...Array(PARTITIONS).keys()];
  return parts.map((partition) => ({ kind: 'pql', ...base, pql: w.pql, partition }));
}

/** One message as sent: where it went and its offset there. */
interface Sent {
  topic: ClusterTopic;
  partition: number;
  msg: ClusterMessage;
}

/** Every message in the order the coordinators sent them, with offsets per topic partition. */
function send(writes: readonly Write[]): Sent[] {
  const out: Sent[] = [];
  const next = new Map<string, number>();
  let meta = 0;
  const put = (topic: ClusterTopic, partition: number, command: Command): void => {
    const key = `${topic}/${partition}`;
    for (const m of commandMessages({ ...command, time: STAMP })) {
      const offset = next.get(key) ?? 0;
      next.set(key, offset + 1);
      out.push({
        topic,
        partition,
        msg: { offset: String(offset), value: m.value as Buffer, timestamp: String(STAMP) },
      });
    }
    if (topic === 'meta') meta = next.get(key) ?? 0;
  };
  for (const c of SCHEMA) put('meta', 0, c);
  for (const w of writes) {
    if ('recreate' in w) for (const c of RECREATE) put('meta', 0, c);
    else if ('quantum' in w)
      put('meta', 0, {
        kind: 'frame',
        frame: { op: 'setFrameTimeQuantum', index: 'i', frame: 't', quantum: w.quantum },
      });
    else for (const c of commandsOf(w, meta)) put('log', c.partition, c);
  }
  return out;
}

/**
 * Applies the messages on a fresh engine with the system clock at `wallClock`: `inOrder`, each
 * as soon as it was sent (a holder that keeps up); else NAME.meta to its end first, then every
 * log partition (a holder that catches up later, a restore). The state's digest.
 */
async function applyAt(wallClock: number, sent: readonly Sent[], inOrder: boolean): Promise<string> {
  vi.setSystemTime(wallClock);
  const node = await openEngine();
  dirs.push(node.dir);
  try {
    const applier = newApplier(node.engine);
    const order = inOrder
      ? sent
      : [...sent.filter((s) => s.topic === 'meta'), ...sent.filter((s) => s.topic === 'log')];
    for (const s of order) await applier.deliver(s.topic, s.partition, [s.msg], String(BigInt(s.msg.offset) + 1n));
    return node.engine.peekApplied(stateDigest);
  } finally {
    await node.close();
  }
}

describe('cluster commands are deterministic', () => {
  it('give the same state whatever the wall clock and the moment at which a holder applies them', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 12 }), async (writes) => {
          const sent = send(writes);
          const keepingUp = await applyAt(STAMP, sent, true);
          const later = await applyAt(LATER, sent, false);
          expect(later).toBe(keepingUp);
        }),
        { numRuns: 25 },
      );
    } finally {
      vi.useRealTimers();
    }
  }, 120_000);
});
