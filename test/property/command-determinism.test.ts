// Issue 22, deterministic commands: applying a cluster command is a function of the command and
// the partition's state alone. The same random stream of commands (schema, keys, PQL writes whose
// time ranges have no `to`, imports with timestamps) is applied by the real CommandApplier to two
// real LevelDB engines, once with the system clock at the coordinator's time and once 30 days
// later (a replacement holder, a restore); the two states must have the same digest. A holder
// that took "now" from its own clock would store different bits for `Store(Row(t=…, from=…), …)`
// (a missing `to` means now + 1 day), and the generator writes time bits on both sides of it.
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

/** One write: its PQL (or an import of timestamped bits), and the column that picks its partition. */
type Write = { pql: string; col: number } | { importCols: number[]; days: number[] };

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
);

/** The log commands of one write: one partition for a column, every partition for ClearRow/Store. */
function commandsOf(w: Write): LogCommand[] {
  const base = { index: 'i', metaOffset: String(SCHEMA.length) };
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

/** Each topic partition's messages with offsets, as a consumer would hand them over. */
function messages(commands: Command[], topicOf: (c: Command) => [ClusterTopic, number]): Map<string, ClusterMessage[]> {
  const out = new Map<string, ClusterMessage[]>();
  for (const c of commands) {
    const [topic, p] = topicOf(c);
    const key = `${topic}/${p}`;
    const list = out.get(key) ?? [];
    for (const m of commandMessages(c)) {
      const value = m.value as Buffer;
      list.push({ offset: String(list.length), value, timestamp: String(m.timestamp ?? STAMP) });
    }
    out.set(key, list);
  }
  return out;
}

/** Applies the stream on a fresh engine with the system clock at `wallClock`; the state's digest. */
async function applyAt(wallClock: number, stream: Map<string, ClusterMessage[]>): Promise<string> {
  vi.setSystemTime(wallClock);
  const node = await openEngine();
  dirs.push(node.dir);
  try {
    const applier = newApplier(node.engine);
    const meta = stream.get('meta/0') ?? [];
    await applier.deliver('meta', 0, meta, String(meta.length));
    for (const [key, msgs] of stream) {
      const [topic, p] = key.split('/');
      if (topic === 'log') await applier.deliver('log', Number(p), msgs, String(msgs.length));
    }
    return node.engine.peekApplied(stateDigest);
  } finally {
    await node.close();
  }
}

describe('cluster commands are deterministic', () => {
  it('the same commands give the same state whatever the wall clock of the node that applies them', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(write, { minLength: 1, maxLength: 12 }), async (writes) => {
          const stamped = (c: Command): Command => ({ ...c, time: STAMP });
          const commands: Command[] = [...SCHEMA, ...writes.flatMap(commandsOf)].map(stamped);
          const stream = messages(commands, (c) =>
            c.kind === 'pql' || c.kind === 'import' ? ['log', c.partition] : ['meta', 0],
          );
          const now = await applyAt(STAMP, stream);
          const later = await applyAt(LATER, stream);
          expect(later).toBe(now);
        }),
        { numRuns: 25 },
      );
    } finally {
      vi.useRealTimers();
    }
  }, 120_000);
});
