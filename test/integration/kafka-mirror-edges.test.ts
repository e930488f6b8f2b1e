// Mirror and replica edges against the real broker: --kafka-mirror-ack kafka bounds a write's
// wait (503, durable locally) and never delays reads; the mirror topic is created with unlimited
// retention and a finite one is reported; a replica that finds a gap in the topic says so in
// /status and refuses queries with the seeding procedure.
import { ConfigResourceTypes } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { freePort, tempDir } from '../helpers/server.js';
import { http, kafkaClient, kafkaServerPool, ok, uniqueTopic, waitFor } from './kafka-support.js';

const pool = kafkaServerPool();

async function mirrored(s: TestServer): Promise<void> {
  await waitFor('mirror caught up', async () => {
    const g = (await ok(s, 'GET', '/kafka/mirror')).json<{ ackedSeq: number; durableSeq: number }>();
    return g.ackedSeq === g.durableSeq;
  });
}

describe('--kafka-mirror-ack kafka with the broker unreachable', () => {
  it('answers a write 503 after the timeout (durable locally) while reads go on', async () => {
    const dataDir = tempDir();
    const setup = await startServer({ dataDir });
    await ok(setup, 'POST', '/index/i', {});
    await ok(setup, 'POST', '/index/i/field/f', {});
    await ok(setup, 'POST', '/index/i/query', 'Set(1, f=1)');
    await setup.close();

    // A closed port: no broker ever answers there (the shared broker stays untouched).
    const port = await freePort();
    const s = await pool.start({
      dataDir,
      kafkaBrokers: [`127.0.0.1:${port}`],
      kafkaMirrorTopic: uniqueTopic('ack-timeout'),
      kafkaMirrorAck: 'kafka',
      kafkaMirrorAckTimeout: 2_000,
    });
    let settled = false;
    const write = http(s, 'POST', '/index/i/query', 'Set(2, f=1)').finally(() => (settled = true));
    // Reads answer while the write still waits for Kafka.
    for (const pql of ['Count(Row(f=1))', 'Row(f=1)', 'TopN(f)']) {
      const r = await http(s, 'POST', '/index/i/query', pql);
      expect(r.status, r.body).toBe(200);
    }
    expect((await http(s, 'GET', '/status')).status).toBe(200);
    expect((await http(s, 'GET', '/schema')).status).toBe(200);
    expect(settled).toBe(false);

    const w = await write;
    expect(w.status).toBe(503);
    expect(w.json<{ error: string }>().error).toMatch(
      /^the write is durable locally \(sequence \d+\) and will be mirrored to Kafka topic "ack-timeout-[0-9a-f]+" when the broker answers, but Kafka did not acknowledge it within 2000 ms/,
    );
    // Durable locally: it is there.
    expect(
      (await ok(s, 'POST', '/index/i/query', 'Row(f=1)')).json<{ results: { columns: number[] }[] }>().results[0]
        .columns,
    ).toEqual([1, 2]);
    // A read-only query never waited: it did not write.
    expect((await http(s, 'POST', '/index/i/query', 'Count(Row(f=1))')).json()).toEqual({ results: [2] });
  });
});

describe('mirror topic retention (real broker)', () => {
  async function retention(topic: string): Promise<Record<string, string | null>> {
    const admin = kafkaClient(pool.brokers).admin();
    await admin.connect();
    try {
      const res = await admin.describeConfigs({
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms', 'retention.bytes'] }],
        includeSynonyms: false,
      });
      return Object.fromEntries(res.resources[0].configEntries.map((e) => [e.configName, e.configValue]));
    } finally {
      await admin.disconnect();
    }
  }

  it('creates the topic with unlimited retention', async () => {
    const topic = uniqueTopic('mirror-ret');
    const s = await pool.start({ kafkaMirrorTopic: topic });
    await ok(s, 'POST', '/index/r', {});
    await mirrored(s);
    expect(await retention(topic)).toEqual({ 'retention.ms': '-1', 'retention.bytes': '-1' });
    expect((await ok(s, 'GET', '/kafka/mirror')).json<Record<string, unknown>>().retentionWarning).toBeUndefined();
  });

  it('reports an existing topic with a finite retention', async () => {
    const topic = uniqueTopic('mirror-finite');
    const admin = kafkaClient(pool.brokers).admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic, numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
      waitForLeaders: true,
    });
    await admin.disconnect();
    const s = await pool.start({ kafkaMirrorTopic: topic });
    await ok(s, 'POST', '/index/r', {});
    await mirrored(s);
    const g = (await ok(s, 'GET', '/kafka/mirror')).json<{ retentionWarning?: string }>();
    expect(g.retentionWarning).toMatch(
      new RegExp(`^mirror topic ${topic} has a finite retention \\(retention.ms=3600000\\)`),
    );
  });
});

describe('a replica that cannot follow', () => {
  it('says so in /status and refuses queries naming the seeding procedure', async () => {
    const topic = uniqueTopic('mirror-gap');
    const primary = await pool.start({ kafkaMirrorTopic: topic });
    await ok(primary, 'POST', '/index/g', {});
    await ok(primary, 'POST', '/index/g/field/f', {});
    for (let i = 0; i < 4; i++) await ok(primary, 'POST', '/index/g/query', `Set(${i}, f=1)`);
    await mirrored(primary);
    // What a finite retention does: the oldest records are gone from the topic.
    const admin = kafkaClient(pool.brokers).admin();
    await admin.connect();
    await admin.fetchTopicMetadata({ topics: [topic] }); // deleteTopicRecords needs the leader's metadata
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '3' }] });
    await admin.disconnect();

    const replica = await pool.start({ replicaOf: topic });
    await waitFor(
      'replica stuck',
      async () => (await ok(replica, 'GET', '/kafka/replica')).json<{ state: string }>().state === 'failed',
      20_000,
    );
    const st = (await ok(replica, 'GET', '/status')).json<{ state: string; stateReason: string }>();
    expect(st.state).toBe('DEGRADED');
    expect(st.stateReason).toMatch(/^replica cannot follow: mirror topic jumps from sequence 0 to \d+/);
    const q = await http(replica, 'POST', '/index/g/query', 'Count(Row(f=1))');
    expect(q.status).toBe(503);
    expect(q.json<{ error: string }>().error).toMatch(
      new RegExp(
        `^this replica cannot follow Kafka topic "${topic}" and answers no queries: .*restore a backup or snapshot of the primary taken at sequence ≥ \\d+ into its data directory, or start it from an earlier offset`,
      ),
    );
    expect(replica.fatal).toEqual([]);
    // The primary is unaffected.
    expect((await ok(primary, 'GET', '/status')).json<{ state: string }>().state).toBe('NORMAL');
  });
});
