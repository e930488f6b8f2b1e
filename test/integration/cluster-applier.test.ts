// The holder side on real parts: commands produced to real topics (some cut into chunks, so
// they travel in transactions), fetched by a plain read-committed consumer and delivered to the
// applier of a real LevelDB engine. A restarted node resumes after the last command it applied —
// never applying one twice, even when everything is delivered again — and a transaction aborted
// midway is invisible to a read-committed reader.
import type { Consumer, Kafka } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { Command, LogCommand } from '../../src/cluster/commands/command.js';
import { decodeCommand } from '../../src/cluster/commands/command-codec.js';
import { ClusterProducer, produceRounds } from '../../src/cluster/commands/producer.js';
import { DomainError } from '../../src/domain/errors.js';
import type { Engine } from '../../src/engine/engine.js';
import { executeQuery } from '../../src/executor/index.js';
import { parse } from '../../src/pql/index.js';
import {
  consumeInto,
  createClusterTopics,
  newApplier,
  openEngine,
  realPartsForFile,
  SET_FIELD,
} from './cluster-write-support.js';

let producer: ClusterProducer;
const { kafka: brokerClient, open, dirs } = realPartsForFile();

async function startProducer(name: string, chunkBytes?: number): Promise<ClusterProducer> {
  const p = new ClusterProducer(brokerClient(), `${name}-test`, { transactionSlots: 2, chunkBytes });
  await p.start();
  open.push({ close: () => p.stop() });
  return p;
}

function columns(engine: Engine, index: string, pql: string): unknown {
  return engine.peekApplied((h) => {
    const r = executeQuery(h, index, parse(pql), { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false });
    return r.results.map((x) => (x.type === 'row' ? x.columns : x));
  });
}

const pql = (text: string, partition = 0): LogCommand => ({
  kind: 'pql',
  index: 'i',
  pql: text,
  partition,
  metaOffset: '0',
});

describe('cluster applier on a real broker and a real engine', () => {
  it('applies in order (chunks too), and after a restart applies nothing twice', async () => {
    const name = await createClusterTopics(brokerClient());
    // Small chunks: every command below is several messages, sent in a transaction.
    producer = await startProducer(name, 64);
    const meta = (command: Command) => producer.send([{ topic: `${name}.meta`, partition: 0, command }]);
    const log = (command: LogCommand) =>
      producer.send([{ topic: `${name}.log`, partition: command.partition, command }]);
    await meta({
      kind: 'schema',
      schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: true } },
    });
    const field = SET_FIELD;
    await meta({
      kind: 'schema',
      schema: { op: 'createField', index: 'i', field: 'a', options: field, extraIntFields: [] },
    });
    const lastMeta = await meta({
      kind: 'schema',
      schema: { op: 'createField', index: 'i', field: 'b', options: field, extraIntFields: [] },
    });
    const metaNext = (BigInt(lastMeta[0].offset) + 1n).toString();
    // Re-applying this sequence on top of its own result would change b=1 to {1, 5}.
    const sequence = ['Set(1, a=1)', 'Store(Row(a=1), b=1)', 'ClearRow(a=1)', 'Set(5, a=1)', 'Set(1, nope=1)'];
    let last = '';
    for (const s of sequence) last = (await log({ ...pql(s), metaOffset: metaNext }))[0].offset;
    const next = (BigInt(last) + 1n).toString();

    const first = await openEngine();
    dirs.push(first.dir);
    const applier = newApplier(first.engine);
    const consumer = await consumeInto(brokerClient(), name, applier);
    await applier.waitApplied('log', 0, next, AbortSignal.timeout(30_000));
    await consumer.disconnect();
    expect(columns(first.engine, 'i', 'Row(a=1) Row(b=1)')).toEqual([[5], [1]]);
    // The failing command is recorded as failed, with the single node's status and text.
    expect(applier.results.get('log', 0, last)).toEqual({
      ok: false,
      status: 404,
      code: 'not_found',
      message: 'executing: field not found: nope',
    });
    const position = applier.position('log', 0);
    expect(position).toBeGreaterThanOrEqual(BigInt(next));
    await first.close();

    // Restart over the same data directory: replay, then every message delivered again.
    const again = await openEngine(first.dir);
    open.push(again);
    const applier2 = newApplier(again.engine);
    await applier2.load('log', [0]);
    expect(applier2.position('log', 0)).toBe(position);
    expect(columns(again.engine, 'i', 'Row(a=1) Row(b=1)')).toEqual([[5], [1]]);
    const consumer2 = await consumeInto(brokerClient(), name, applier2);
    open.push({ close: () => consumer2.disconnect() });
    await log({ ...pql('Set(9, b=2)'), metaOffset: metaNext });
    await applier2.waitApplied('log', 0, (BigInt(position ?? 0n) + 1n).toString(), AbortSignal.timeout(30_000));
    await again.engine.read(() => undefined);
    expect(columns(again.engine, 'i', 'Row(a=1) Row(b=1) Row(b=2)')).toEqual([[5], [1], [9]]);
  }, 120_000);

  it('a transaction aborted midway is invisible to a read-committed reader', async () => {
    const name = await createClusterTopics(brokerClient());
    const p = await startProducer(name);
    const topic = `${name}.log`;
    const aborted = [
      { topic, partition: 0, command: pql('Set(1, aborted=1)', 0) },
      { topic, partition: 1, command: pql('Set(2, aborted=1)', 1) },
    ];
    await expect(
      p.transaction(async (tx) => {
        await produceRounds(tx, aborted);
        throw new Error('the coordinator failed midway');
      }),
    ).rejects.toThrow(DomainError);
    const committed = await p.send([
      { topic, partition: 0, command: pql('Set(3, committed=1)', 0) },
      { topic, partition: 1, command: pql('Set(4, committed=1)', 1) },
    ]);
    const seen = await readAll(brokerClient(), topic, committed.length);
    expect(seen.sort()).toEqual(['Set(3, committed=1)', 'Set(4, committed=1)']);
  }, 60_000);
});

/** PQL texts of the commands a read-committed consumer reads from the topic until it has `n`. */
async function readAll(k: Kafka, topic: string, n: number): Promise<string[]> {
  const consumer: Consumer = k.consumer({ groupId: `${topic}-reader`, readUncommitted: false, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: string[] = [];
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        const c = decodeCommand(message.value ?? Buffer.alloc(0), 'test');
        if (c.kind === 'pql') seen.push(c.pql);
        if (seen.length >= n) resolve();
      },
    });
  });
  // Anything else committed would have arrived with them (same transactions, earlier offsets).
  await consumer.disconnect();
  return seen;
}
