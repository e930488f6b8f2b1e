// A replica process SIGKILLed again and again while the primary keeps writing and mirroring:
// each restart resumes from the position stored with its last applied batch (snapshots taken
// meanwhile), and in the end the replica answers like the primary and its data directory,
// replayed on its own, has the primary's exact state (stateDigest).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateDigest } from '../../src/state/digest.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import {
  freePort,
  removeDir,
  spawnServer,
  startServer,
  tempDir,
  type ChildServer,
  type TestServer,
} from '../helpers/server.js';
import { http, ok, uniqueTopic, waitFor } from '../integration/kafka-support.js';
import { QUERIES, bigImport, createSchema, schemaChanges, writeRound } from '../integration/kafka-workload.js';

const KILLS = 3;

let kafka: KafkaHandle;
let replica: ChildServer | undefined;
const opened: TestServer[] = [];
const replicaDir = tempDir('bitledger-replica-crash-');

beforeAll(async () => {
  kafka = await kafkaBrokersForTest();
});

afterAll(async () => {
  await replica?.kill('SIGKILL');
  for (const s of opened) {
    await s.close().catch(() => undefined);
    removeDir(s.dataDir);
  }
  removeDir(replicaDir);
  await kafka?.release();
});

async function appliedSeq(url: string): Promise<number> {
  return (await ok(url, 'GET', '/kafka/replica')).json<{ appliedSeq: number }>().appliedSeq;
}

describe('SIGKILL of a replica mid-stream', () => {
  it(`catches up exactly after ${KILLS} kills while the primary keeps writing`, async () => {
    const topic = uniqueTopic('replica-crash');
    const primary = await startServer({ kafkaBrokers: kafka.brokers, kafkaMirrorTopic: topic });
    opened.push(primary);
    await createSchema(primary);
    await writeRound(primary, 0);

    const port = await freePort();
    const args = ['--kafka-brokers', kafka.brokers.join(','), '--replica-of', topic, '--snapshot-every-events', '40'];
    replica = await spawnServer(replicaDir, port, args);
    let round = 1;
    for (let k = 0; k < KILLS; k++) {
      const server = replica;
      const before = await appliedSeq(server.url);
      const writing = (async () => {
        for (let i = 0; i < 3; i++) await writeRound(primary, round++);
        if (k === 1) await schemaChanges(primary);
        await bigImport(primary, 100 + k);
      })();
      await waitFor('replica progress', async () => (await appliedSeq(server.url)) > before, 30_000, 20);
      await new Promise((r) => setTimeout(r, Math.random() * 100));
      await server.kill('SIGKILL');
      await writing;
      replica = await spawnServer(replicaDir, port, args);
    }
    const url = replica.url;
    await waitFor(
      'replica caught up',
      async () => (await appliedSeq(url)) === primary.engine.committedLog.durableSeq,
      60_000,
    );

    // Same answers over HTTP (ranked caches refreshed on both sides first).
    await ok(primary, 'POST', '/recalculate-caches');
    await ok(url, 'POST', '/recalculate-caches');
    for (const [index, pql] of QUERIES) {
      const a = await http(primary, 'POST', `/index/${index}/query`, pql);
      const b = await http(url, 'POST', `/index/${index}/query`, pql);
      expect({ pql, body: b.body }).toEqual({ pql, body: a.body });
    }
    expect((await http(url, 'POST', '/index/i1/query', 'Set(1, s=1)')).status).toBe(405);

    // The replica's own files replay to the primary's exact state.
    await replica.kill('SIGTERM');
    replica = undefined;
    const reopened = await startServer({ dataDir: replicaDir });
    opened.push(reopened);
    expect(reopened.engine.appliedSeq).toBe(primary.engine.committedLog.durableSeq);
    expect(reopened.engine.peekApplied(stateDigest)).toBe(primary.engine.peekApplied(stateDigest));
  });
});
