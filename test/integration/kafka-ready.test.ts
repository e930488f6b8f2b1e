// /ready follows the Kafka roles: a replica that stopped following (a foreign message in its
// topic) answers 503 with the reason and /status says DEGRADED, while a healthy replica is 200.
import { describe, expect, it } from 'vitest';
import { http, kafkaServerPool, ok, produce, uniqueTopic, waitFor } from './kafka-support.js';

const pool = kafkaServerPool();

describe('/ready with Kafka (real broker)', () => {
  it('is 200 for a following replica and 503 once a replica has failed', async () => {
    const topic = uniqueTopic('ready-mirror');
    const primary = await pool.start({ kafkaMirrorTopic: topic });
    await ok(primary, 'POST', '/index/r', {});
    const healthy = await pool.start({ replicaOf: topic });
    await waitFor(
      'replica following',
      async () => (await ok(healthy, 'GET', '/kafka/replica')).json<{ state: string }>().state === 'following',
      20_000,
    );
    expect((await http(healthy, 'GET', '/ready')).status).toBe(200);
    expect((await http(primary, 'GET', '/ready')).status).toBe(200);

    const foreign = uniqueTopic('ready-foreign');
    await produce(pool.brokers, foreign, [{ hello: 'world' }]);
    const failed = await pool.start({ replicaOf: foreign });
    await waitFor(
      'replica failed',
      async () => (await ok(failed, 'GET', '/kafka/replica')).json<{ state: string }>().state === 'failed',
      20_000,
    );
    const r = await http(failed, 'GET', '/ready');
    expect(r.status).toBe(503);
    expect(r.json<{ reason: string }>().reason).toMatch(new RegExp(`replica of Kafka topic "${foreign}" failed`));
    const st = (await ok(failed, 'GET', '/status')).json<{ state: string; reason: string }>();
    expect(st.state).toBe('DEGRADED');
    expect((await http(failed, 'GET', '/health')).status).toBe(200);
  });
});
