// A holder that produced a log command applies it from the bytes it sent (Feed.own), on real
// parts: the real producer and topics, a real LevelDB engine, the real Feed and applier. Node A
// applies its own commands that way; node B reads everything back from Kafka. Both must reach
// the same state and results, A's consumer (started after) must apply none of them again, a
// command whose predecessors A has not applied yet is left to the consumer, and A restarted over
// its data and fed the whole topic again must change nothing.
import type { Consumer, EachBatchPayload } from 'kafkajs';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CommandApplier } from '../../src/cluster/commands/applier.js';
import type { Command, LogCommand, Stamp } from '../../src/cluster/commands/command.js';
import { Feed } from '../../src/cluster/commands/feed.js';
import { ClusterProducer, type Produced } from '../../src/cluster/commands/producer.js';
import { Positions } from '../../src/cluster/commands/positions.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import type { Engine } from '../../src/engine/engine.js';
import { executeQuery } from '../../src/executor/index.js';
import { parse } from '../../src/pql/index.js';
import {
  consumeInto,
  createClusterTopics,
  newApplier,
  openEngine,
  PARTITIONS,
  SET_FIELD,
  realPartsForFile,
} from './cluster-write-support.js';

const { kafka: brokerClient, open, dirs } = realPartsForFile();

const SHARD_WIDTH = 1 << 20;
const READ = 'Row(a=1) Row(b=1) Row(b=2) Row(c=3) Row(c=4)';

function rows(engine: Engine): unknown {
  return engine.peekApplied((h) => {
    const r = executeQuery(h, 'i', parse(READ), { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false });
    return r.results.map((x) => (x.type === 'row' ? x.columns : x));
  });
}

/** A node's applier fed by the real Feed: meta straight from a consumer, the log through the Feed. */
interface FedNode {
  applier: CommandApplier;
  feed: Feed;
  /** Starts the consumer of NAME.log (from the start; the Feed skips what is applied). */
  consumeLog(): Promise<Consumer>;
  /** Stops its consumers. */
  stop(): Promise<void>;
}

async function fedNode(name: string, engine: Engine): Promise<FedNode> {
  const applier = newApplier(engine);
  await applier.load('meta', [0]);
  const all = Array.from({ length: PARTITIONS }, (_, p) => p);
  await applier.load('log', all);
  const positions = new Positions();
  for (const p of all) positions.advance('log', p, applier.position('log', p) ?? 0n);
  const feed = new Feed('log', applier, positions);
  const consumers: Consumer[] = [];
  const consume = async (topic: string, each: (b: EachBatchPayload) => Promise<void>): Promise<Consumer> => {
    const c = brokerClient().consumer({ groupId: `${name}-${randomBytes(3).toString('hex')}`, maxWaitTimeInMs: 100 });
    await c.connect();
    await c.subscribe({ topics: [topic], fromBeginning: true });
    await c.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: PARTITIONS,
      eachBatch: each,
    });
    consumers.push(c);
    open.push({ close: () => c.disconnect() });
    return c;
  };
  await consume(`${name}.meta`, async ({ batch }) => {
    await applier.deliver('meta', 0, batch.messages, (BigInt(batch.lastOffset()) + 1n).toString());
  });
  return {
    applier,
    feed,
    consumeLog: () => consume(`${name}.log`, (b) => feed.eachBatch(b)),
    stop: async () => {
      for (const c of consumers) await c.disconnect();
    },
  };
}

describe('a holder applies the log commands it produced from its own bytes', () => {
  it('reaches the state and results of a replay from Kafka, and applies nothing twice', async () => {
    const name = await createClusterTopics(brokerClient());
    const producer = new ClusterProducer(brokerClient(), `${name}-a`, { transactionSlots: 1 });
    await producer.start();
    open.push({ close: () => producer.stop() });
    const other = new ClusterProducer(brokerClient(), `${name}-b`, { transactionSlots: 1 });
    await other.start();
    open.push({ close: () => other.stop() });

    const meta = (command: Command) => producer.send([{ topic: `${name}.meta`, partition: 0, command }]);
    await meta({
      kind: 'schema',
      schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: true } },
    });
    let last: Produced[] = [];
    for (const field of ['a', 'b', 'c'])
      last = await meta({
        kind: 'schema',
        schema: { op: 'createField', index: 'i', field, options: SET_FIELD, extraIntFields: [] },
      });
    const metaOffset = (BigInt(last[0].offset) + 1n).toString();
    // In the past: the broker refuses timestamps too far ahead of its clock.
    const time = 1_700_000_000_000;
    const pql = (text: string): LogCommand & Stamp => ({
      kind: 'pql',
      index: 'i',
      pql: text,
      partition: 0,
      metaOffset,
      time,
    });
    const columns = [3, 7, SHARD_WIDTH - 1];
    const body = encodeImportRequest({ index: 'i', field: 'c', shard: 0, rowIds: [3, 3, 4], columnIds: columns });
    const imported: LogCommand & Stamp = {
      kind: 'import',
      index: 'i',
      field: 'c',
      shard: 0,
      format: 'bits',
      clear: false,
      body,
      partition: 0,
      metaOffset,
      time,
    };
    // A column outside the shard it names: refused (400) by every holder; its events, built
    // ahead, are refused the same way there, so the apply decides (and refuses) as any holder.
    const outside: LogCommand & Stamp = {
      ...imported,
      body: encodeImportRequest({ index: 'i', field: 'c', shard: 0, rowIds: [3], columnIds: [SHARD_WIDTH + 1] }),
    };
    // Not a protobuf ImportRequest: refused (400) by every holder, its ahead-decode rejecting too.
    const garbled: LogCommand & Stamp = { ...imported, body: Uint8Array.from([0xff, 0xff, 0xff]) };
    // Applied twice, this sequence would leave b=1 as {1, 5} (Store after the last Set(5)).
    const sequence = [
      pql('Set(1, a=1)'),
      pql('Store(Row(a=1), b=1)'),
      pql('ClearRow(a=1)'),
      pql('Set(5, a=1)'),
      imported,
      outside,
      garbled,
      pql('Set(1, nope=1)'),
    ];

    const a = await openEngine();
    dirs.push(a.dir);
    const nodeA = await fedNode(name, a.engine);
    const owned: string[] = [];
    for (const command of sequence) {
      // As a coordinator does: an import's body decoded while Kafka takes it (ClusterWrites.logResults).
      const decodedBody = nodeA.applier.predecode(command);
      const ahead = await decodedBody?.catch(() => undefined);
      // Its events are built ahead too (committed after Kafka's acknowledgment, if still valid).
      if (command === imported) expect(ahead?.format === 'bits' && ahead.prepared !== undefined).toBe(true);
      if (command === outside) expect(ahead?.format === 'bits' && ahead.prepared === undefined).toBe(true);
      const [at] = await producer.send([{ topic: `${name}.log`, partition: 0, command }]);
      expect(at.message, 'a single-message command comes back with its message').toBeDefined();
      const message = at.message === undefined ? undefined : { ...at.message, ...(decodedBody ? { decodedBody } : {}) };
      if (message !== undefined && (await nodeA.feed.own(0, message))) owned.push(at.offset);
    }
    // No consumer reads A's log yet: every command followed its own predecessor, so each was A's own.
    expect(owned).toHaveLength(sequence.length);

    // Another coordinator's command, then A's own after it: A has not applied the first, so its
    // own is left to the consumer (applying it would skip the first).
    await other.send([{ topic: `${name}.log`, partition: 0, command: pql('Set(2, b=2)') }]);
    const [after] = await producer.send([{ topic: `${name}.log`, partition: 0, command: pql('Set(6, b=2)') }]);
    expect(after.message).toBeDefined();
    if (after.message !== undefined) expect(await nodeA.feed.own(0, after.message)).toBe(false);
    const end = (BigInt(after.offset) + 1n).toString();

    await nodeA.consumeLog();
    await nodeA.applier.waitApplied('log', 0, end, AbortSignal.timeout(30_000));
    // A replay from Kafka alone.
    const b = await openEngine();
    dirs.push(b.dir);
    open.push(b);
    const applierB = newApplier(b.engine);
    const consumerB = await consumeInto(brokerClient(), name, applierB);
    open.push({ close: () => consumerB.disconnect() });
    await applierB.waitApplied('log', 0, end, AbortSignal.timeout(30_000));

    const want = [[5], [1], [2, 6], columns.slice(0, 2), [SHARD_WIDTH - 1]];
    expect(rows(a.engine)).toEqual(want);
    expect(rows(b.engine)).toEqual(want);
    for (let o = BigInt(owned[0]); o < BigInt(end); o++) {
      const offset = o.toString();
      expect(nodeA.applier.results.get('log', 0, offset), `result at ${offset}`).toEqual(
        applierB.results.get('log', 0, offset),
      );
    }
    expect(nodeA.applier.results.get('log', 0, owned[owned.length - 3])).toMatchObject({ ok: false, status: 400 });
    expect(nodeA.applier.results.get('log', 0, owned[owned.length - 2])).toMatchObject({ ok: false, status: 400 });
    expect(nodeA.applier.results.get('log', 0, owned[owned.length - 1])).toMatchObject({ ok: false, status: 404 });
    expect(nodeA.applier.position('log', 0)).toBe(applierB.position('log', 0));

    // Restarted over its data and fed the whole topic again: nothing changes.
    await nodeA.stop();
    await a.close();
    const again = await openEngine(a.dir);
    open.push(again);
    const restarted = await fedNode(name, again.engine);
    expect(restarted.applier.position('log', 0)).toBe(BigInt(end));
    await restarted.consumeLog();
    await other.send([{ topic: `${name}.log`, partition: 0, command: pql('Set(9, b=2)') }]);
    await restarted.applier.waitApplied('log', 0, (BigInt(end) + 1n).toString(), AbortSignal.timeout(30_000));
    expect(rows(again.engine)).toEqual([[5], [1], [2, 6, 9], columns.slice(0, 2), [SHARD_WIDTH - 1]]);
  }, 120_000);
});
