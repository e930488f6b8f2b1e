// Mirror → replica against the real broker: after a mixed workload (schema changes, sets,
// clears, imports, int values, keys) the replica holds the same state (stateDigest) and answers
// the same queries; it refuses local writes with a 4xx naming the topic; a replica restarted
// mid-stream (graceful here; SIGKILL in test/crash/kafka-replica-crash) resumes without gaps,
// a replica built from nothing replays the whole topic, and one seeded with a snapshot of the
// primary replays only what follows it.
import { describe, expect, it } from 'vitest';
import type { Config } from '../../src/config/config.js';
import { pino } from 'pino';
import { EventLog, SnapshotStore } from '../../src/storage/index.js';
import { tempDir, type TestServer } from '../helpers/server.js';
import { consume, http, kafkaClient, ok, produce, uniqueTopic, waitFor, kafkaServerPool } from './kafka-support.js';
import { bigImport, caughtUp, createSchema, sameAnswers, schemaChanges, writeRound } from './kafka-workload.js';

const pool = kafkaServerPool();
const servers = pool.servers;

const start = (overrides: Partial<Config>): Promise<TestServer> => pool.start(overrides);

describe('Kafka mirror → replica (real broker)', () => {
  it('replicates a mixed workload exactly, refuses local writes, and resumes after a restart', async () => {
    const topic = uniqueTopic('mirror');
    const primary = await start({ kafkaMirrorTopic: topic });
    await createSchema(primary);
    await writeRound(primary, 0);
    await bigImport(primary, 7);

    // A replica that starts after the primary wrote: it replays the topic from the beginning.
    const replica = await start({ replicaOf: topic, snapshotEveryEvents: 40 });
    await writeRound(primary, 1);
    await schemaChanges(primary);
    await writeRound(primary, 2);
    await caughtUp(primary, replica);
    await sameAnswers(primary, replica);
    expect(replica.engine.snapshots.stats.count).toBeGreaterThan(0);

    // Read-only: a clear 4xx naming the topic, for queries and schema calls alike.
    const w = await http(replica, 'POST', '/index/i1/query', 'Set(1, s=1)');
    expect(w.status).toBe(405);
    expect(w.body).toContain(topic);
    expect((await http(replica, 'POST', '/index/zz', {})).status).toBe(405);
    expect((await http(replica, 'POST', '/index/i1/field/s/import', { rowIDs: [1], columnIDs: [1] })).status).toBe(405);

    // Gauges: /status extras on both sides, and the endpoints.
    const st = (await ok(replica, 'GET', '/status')).json<{
      replica: { appliedSeq: number; lagMessages: number; topic: string };
    }>();
    expect(st.replica).toMatchObject({ topic, appliedSeq: primary.engine.committedLog.durableSeq });
    const mirror = (await ok(primary, 'GET', '/kafka/mirror')).json<{ lagRecords: number; ackedSeq: number }>();
    await waitFor(
      'mirror lag 0',
      async () => (await ok(primary, 'GET', '/kafka/mirror')).json<{ lagRecords: number }>().lagRecords === 0,
    );
    expect(mirror.ackedSeq).toBeGreaterThan(0);
    expect((await ok(replica, 'GET', '/kafka/replica')).json<{ state: string }>().state).toBe('following');

    // Restart the replica while the primary keeps writing: it resumes where it stopped.
    const dataDir = replica.dataDir;
    const writing = (async () => {
      for (let r = 3; r < 7; r++) await writeRound(primary, r);
    })();
    await new Promise((r) => setTimeout(r, 100));
    await replica.close();
    servers.splice(servers.indexOf(replica), 1);
    await writing;
    const again = await start({ replicaOf: topic, dataDir, snapshotEveryEvents: 40 });
    await bigImport(primary, 11);
    await caughtUp(primary, again);
    await sameAnswers(primary, again);
    // Resumed from its stored offset, not from the beginning of the topic.
    expect((await ok(again, 'GET', '/kafka/replica')).json<{ appliedRecords: number }>().appliedRecords).toBeLessThan(
      primary.engine.committedLog.durableSeq,
    );

    // The topic itself: every sequence present, in order; the big imports were sent in chunks.
    const admin = kafkaClient(pool.brokers).admin();
    await admin.connect();
    const [{ high }] = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    const msgs = await consume(pool.brokers, topic, Number(high));
    const seqs = msgs.map((m) => Number(m.headers?.['bl-seq']?.toString()));
    expect(new Set(seqs).size).toBe(primary.engine.committedLog.durableSeq);
    expect(seqs.slice(0, 3)).toEqual([1, 2, 3]);
    for (let i = 1; i < seqs.length; i++)
      expect(seqs[i] >= seqs[i - 1] || msgs[i].headers?.['bl-chunk'] === undefined).toBe(true);
    expect(msgs.some((m) => m.headers?.['bl-chunk'] !== undefined)).toBe(true);
  });

  it('a primary restart resumes mirroring after the last acknowledged record', async () => {
    const topic = uniqueTopic('mirror-restart');
    const primary = await start({ kafkaMirrorTopic: topic, snapshotEveryEvents: 30 });
    const replica = await start({ replicaOf: topic });
    await createSchema(primary);
    await writeRound(primary, 0);
    await caughtUp(primary, replica);
    const dataDir = primary.dataDir;
    await primary.close();
    servers.splice(servers.indexOf(primary), 1);
    const reopened = await start({ kafkaMirrorTopic: topic, dataDir, snapshotEveryEvents: 30 });
    await writeRound(reopened, 1);
    await schemaChanges(reopened);
    await caughtUp(reopened, replica);
    await sameAnswers(reopened, replica);
  });

  it('rebuilds a lost node from a snapshot of the primary plus the topic', async () => {
    const topic = uniqueTopic('rebuild');
    const primary = await start({ kafkaMirrorTopic: topic, snapshotEveryEvents: 30 });
    await createSchema(primary);
    await writeRound(primary, 0);
    await writeRound(primary, 1);
    const snapSeq = await primary.engine.snapshot();
    await writeRound(primary, 2);
    await schemaChanges(primary);

    // Install that snapshot alone into a fresh directory, the log continuing after it.
    const dir = tempDir('bitledger-rebuild-');
    const snaps = await primary.engine.snapshots.read(snapSeq);
    const logger = pino({ level: 'silent' });
    await (await SnapshotStore.open(dir, logger)).write(snapSeq, [snaps]);
    const log = await EventLog.open(dir, { fsync: 'always', logger });
    await log.releaseUpTo(snapSeq);
    await log.close();

    const rebuilt = await start({ replicaOf: topic, dataDir: dir });
    expect(rebuilt.engine.appliedSeq).toBe(snapSeq);
    await writeRound(primary, 3);
    await caughtUp(primary, rebuilt);
    await sameAnswers(primary, rebuilt);
    // It replayed only the records after the snapshot.
    expect((await ok(rebuilt, 'GET', '/kafka/replica')).json<{ appliedRecords: number }>().appliedRecords).toBe(
      primary.engine.committedLog.durableSeq - snapSeq,
    );
  });

  it('with --kafka-mirror-ack kafka, a write is answered only once Kafka holds it', async () => {
    const primary = await start({ kafkaMirrorTopic: uniqueTopic('sync'), kafkaMirrorAck: 'kafka' });
    await ok(primary, 'POST', '/index/s', {});
    await ok(primary, 'POST', '/index/s/field/f', {});
    for (let i = 0; i < 5; i++) {
      await ok(primary, 'POST', '/index/s/query', `Set(${i}, f=1)`);
      const g = (await ok(primary, 'GET', '/kafka/mirror')).json<{ ackedSeq: number; durableSeq: number }>();
      expect(g.ackedSeq).toBe(g.durableSeq);
    }
  });

  it('refuses to follow a topic without the bitledger headers, and keeps serving', async () => {
    const topic = uniqueTopic('not-a-mirror');
    await produce(pool.brokers, topic, [{ hello: 'world' }]);
    const replica = await start({ replicaOf: topic });
    await waitFor(
      'replica state failed',
      async () => (await ok(replica, 'GET', '/kafka/replica')).json<{ state: string }>().state === 'failed',
      20_000,
    );
    const st = (await ok(replica, 'GET', '/kafka/replica')).json<{ lastError: string }>();
    expect(st.lastError).toMatch(/not a bitledger mirror message/);
    expect((await http(replica, 'GET', '/schema')).status).toBe(200);
    expect(replica.fatal).toEqual([]);
  });
});
