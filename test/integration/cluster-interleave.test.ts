// Chunks of commands sent by concurrent transactions interleave in a partition. The applier
// assembles each command by its id, applies a command when its last chunk arrives, and keeps its
// durable position at the first chunk of a command still in assembly, listing what it applied
// beyond it: a restart that re-reads from there applies the pending command and nothing twice.
import { randomBytes } from 'node:crypto';
import type { Kafka, Message } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command, LogCommand } from '../../src/cluster/commands/command.js';
import { commandMessages } from '../../src/cluster/commands/command-codec.js';
import type { ClusterMessage } from '../../src/cluster/types.js';
import type { Engine } from '../../src/engine/engine.js';
import { executeQuery } from '../../src/executor/index.js';
import { parse } from '../../src/pql/index.js';
import { kafkaBrokersForTest } from '../helpers/kafka-broker.js';
import { removeDir } from '../helpers/temp.js';
import { createClusterTopics, newApplier, openEngine, testKafka, SET_FIELD } from './cluster-write-support.js';

let kafka: Kafka;
const dirs: string[] = [];

beforeAll(async () => {
  kafka = testKafka((await kafkaBrokersForTest()).brokers);
}, 60_000);

afterAll(() => {
  for (const d of dirs) removeDir(d);
});

const rows = (engine: Engine, pql: string): unknown =>
  engine.peekApplied((h) =>
    executeQuery(h, 'i', parse(pql), { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false }).results.map(
      (r) => (r.type === 'row' ? r.columns : r),
    ),
  );

/** A transactional producer of its own (each concurrent writer is a different transaction). */
async function txProducer(id: string) {
  const p = kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1 });
  await p.connect();
  return p;
}

/** Every message of a topic partition, read committed, in offset order. */
async function readPartition(topic: string, partition: number, count: number): Promise<ClusterMessage[]> {
  const consumer = kafka.consumer({ groupId: `${topic}-${randomBytes(3).toString('hex')}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const out: ClusterMessage[] = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ partition: p, message }) => {
        if (p !== partition) return;
        out.push({
          offset: message.offset,
          value: message.value,
          headers: message.headers,
          timestamp: message.timestamp,
        });
        if (out.length >= count) resolve();
      },
    });
  });
  await consumer.disconnect();
  return out;
}

describe('interleaved chunked commands', () => {
  it('are each applied once, across a restart while one is still in assembly', async () => {
    const name = await createClusterTopics(kafka);
    const meta = `${name}.meta`;
    const log = `${name}.log`;
    const schema = (command: Command): Message[] => commandMessages(command);
    const set = SET_FIELD;
    const setup = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await setup.connect();
    await setup.send({
      topic: meta,
      acks: -1,
      messages: [
        ...schema({
          kind: 'schema',
          schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: true } },
        }),
        ...['a', 'b', 'c'].flatMap((f) =>
          schema({
            kind: 'schema',
            schema: { op: 'createField', index: 'i', field: f, options: set, extraIntFields: [] },
          }),
        ),
      ],
    });
    const pql = (text: string): LogCommand => ({ kind: 'pql', index: 'i', pql: text, partition: 0, metaOffset: '4' });
    // A: Store (re-applying it after C would change b=1); B: stays in assembly across the crash.
    const a = commandMessages(pql('Set(1, a=1) Store(Row(a=1), b=1)'), 16);
    const b = commandMessages(pql('Set(9, c=1)'), 16);
    const c = commandMessages(pql('Set(5, a=1)'));
    expect(a.length).toBeGreaterThan(2);
    expect(b.length).toBeGreaterThan(1);
    const ta = await txProducer(`${name}-a`);
    const tb = await txProducer(`${name}-b`);
    const txa = await ta.transaction();
    const txb = await tb.transaction();
    const to0 = (m: Message): Message => ({ ...m, partition: 0 });
    await txa.send({ topic: log, acks: -1, messages: [to0(a[0])] });
    await txb.send({ topic: log, acks: -1, messages: [to0(b[0])] });
    for (const m of a.slice(1)) await txa.send({ topic: log, acks: -1, messages: [to0(m)] });
    await txa.commit();
    await setup.send({ topic: log, acks: -1, messages: [to0(c[0])] });
    for (const m of b.slice(1)) await txb.send({ topic: log, acks: -1, messages: [to0(m)] });
    await txb.commit();
    for (const p of [ta, tb, setup]) await p.disconnect();

    const metaMsgs = await readPartition(meta, 0, 4);
    const logMsgs = await readPartition(log, 0, a.length + b.length + 1);
    const cAt = logMsgs.findIndex((m) => m.headers?.['bl-chunk'] === undefined);
    const metaNext = String(BigInt(metaMsgs[3].offset) + 1n);

    // First life: everything up to C (A and C applied, B's first chunk read), then a crash.
    const first = await openEngine();
    dirs.push(first.dir);
    const applier = newApplier(first.engine);
    await applier.deliver('meta', 0, metaMsgs, metaNext);
    const upToC = logMsgs.slice(0, cAt + 1);
    await applier.deliver('log', 0, upToC, String(BigInt(upToC[upToC.length - 1].offset) + 1n));
    expect(rows(first.engine, 'Row(a=1) Row(b=1) Row(c=1)')).toEqual([[1, 5], [1], []]);
    // The position stays at B's first chunk, not past C.
    expect(applier.position('log', 0)).toBe(BigInt(logMsgs[1].offset));
    await first.close();

    // Second life: everything from the stored position again.
    const again = await openEngine(first.dir);
    dirs.push(again.dir);
    const applier2 = newApplier(again.engine);
    await applier2.load('log', [0]);
    await applier2.load('meta', [0]);
    const from = applier2.position('log', 0) ?? 0n;
    const rest = logMsgs.filter((m) => BigInt(m.offset) >= from);
    await applier2.deliver('log', 0, rest, String(BigInt(logMsgs[logMsgs.length - 1].offset) + 1n));
    // A not applied again (b=1 would gain 5), B applied once its chunks are whole.
    expect(rows(again.engine, 'Row(a=1) Row(b=1) Row(c=1)')).toEqual([[1, 5], [1], [9]]);
    expect(applier2.position('log', 0)).toBe(BigInt(logMsgs[logMsgs.length - 1].offset) + 1n);
    await again.close();
  }, 120_000);
});
