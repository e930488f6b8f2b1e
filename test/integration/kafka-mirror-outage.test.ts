// Mirror through a broker outage, on a private broker (ops/kafka launcher) that this file stops
// and starts: the primary keeps acknowledging writes while Kafka is down (local acks never wait
// for Kafka), snapshots do not release records the mirror still owes (retention hold) even
// across a primary restart in the middle of the outage, and once the broker is back the mirror
// resumes from the last acknowledged record so the replica ends with the primary's exact state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startServer, type TestServer } from '../helpers/server.js';
import { PrivateBroker, http, ok, uniqueTopic, waitFor } from './kafka-support.js';
import { bigImport, caughtUp, createSchema, sameAnswers, schemaChanges, writeRound } from './kafka-workload.js';

let broker: PrivateBroker;
const servers: TestServer[] = [];

beforeAll(async () => {
  broker = await PrivateBroker.start();
});

afterAll(async () => {
  for (const s of servers) {
    await s.close().catch(() => undefined);
    removeDir(s.dataDir);
  }
  await broker?.release();
});

async function start(overrides: Parameters<typeof startServer>[0]): Promise<TestServer> {
  const s = await startServer({ kafkaBrokers: broker.brokers, ...overrides });
  servers.push(s);
  return s;
}

interface MirrorGauge {
  state: string;
  lagRecords: number;
  ackedSeq: number;
  storedSeq: number;
}

describe('Kafka mirror across a broker outage (private broker)', () => {
  it('acks locally while Kafka is down, holds the log, and catches the replica up afterwards', async () => {
    const topic = uniqueTopic('outage');
    const primary = await start({ kafkaMirrorTopic: topic, snapshotEveryEvents: 25 });
    const replica = await start({ replicaOf: topic });
    await createSchema(primary);
    await writeRound(primary, 0);
    await caughtUp(primary, replica);

    await broker.stop();
    for (let r = 1; r <= 3; r++) {
      const t0 = Date.now();
      await writeRound(primary, r);
      // ~15 acknowledged requests per round: none waited for the dead broker.
      expect(Date.now() - t0).toBeLessThan(5_000);
    }
    await bigImport(primary, 3);
    await waitFor(
      'mirror retrying',
      async () => (await ok(primary, 'GET', '/kafka/mirror')).json<MirrorGauge>().state === 'retrying',
      30_000,
    );
    const down = (await ok(primary, 'GET', '/kafka/mirror')).json<MirrorGauge>();
    expect(down.lagRecords).toBeGreaterThan(0);
    // Local acknowledgements (the default): writes do not wait for Kafka, so a load balancer
    // keeps the node (/ready 200) while /status names the retrying mirror.
    expect((await http(primary, 'GET', '/ready')).status).toBe(200);
    const st = (await ok(primary, 'GET', '/status')).json<{ state: string; reason: string }>();
    expect(st.state).toBe('DEGRADED');
    expect(st.reason).toMatch(new RegExp(`Kafka mirror to topic "${topic}" is failing`));

    // Restart the primary mid-outage, then write enough for several snapshots: the records the
    // mirror still owes must stay in the log.
    const dataDir = primary.dataDir;
    await primary.close();
    servers.splice(servers.indexOf(primary), 1);
    const reopened = await start({ kafkaMirrorTopic: topic, dataDir, snapshotEveryEvents: 25 });
    await schemaChanges(reopened);
    for (let r = 4; r <= 6; r++) await writeRound(reopened, r);
    // Snapshots run in the background after writes, one at a time: on a loaded machine the
    // second may not have started yet, so take what is missing (each releases log it may).
    for (let i = 0; i < 3 && reopened.engine.snapshots.stats.count < 2; i++) await reopened.engine.snapshots.take();
    expect(reopened.engine.snapshots.stats.count).toBeGreaterThan(1);
    const gauge = (await ok(reopened, 'GET', '/kafka/mirror')).json<MirrorGauge>();
    expect(reopened.engine.committedLog.firstRetainedSeq).toBeLessThanOrEqual(gauge.storedSeq + 1);
    expect(
      (await ok(reopened, 'GET', '/status')).json<{ kafkaMirror: MirrorGauge }>().kafkaMirror.lagRecords,
    ).toBeGreaterThan(0);

    await broker.start();
    await caughtUp(reopened, replica, 90_000);
    await sameAnswers(reopened, replica);
    await waitFor(
      'mirror lag 0',
      async () => (await ok(reopened, 'GET', '/kafka/mirror')).json<MirrorGauge>().lagRecords === 0,
      10_000,
    );
  });
});
