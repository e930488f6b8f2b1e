// Acceptance (issue 12): three cluster nodes on loopback (R=1, 8 partitions) and one single
// non-cluster server receive the same seeded random workload (schema, keys, sets, clears,
// ClearRow/Store, protobuf imports per shard, int values, attrs, deletes, a bad request), each
// request to a random node; every answer of the cluster (writes included) and every node's
// answer to every query of a fixed set must equal the single server's, after JSON normalisation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callOk, startReference, TestCluster, type ReferenceServer } from '../helpers/cluster.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { normalised, READS, rng, workload } from './cluster-workload.js';

const SEED = Number(process.env.CLUSTER_SEED ?? 12_345);
const OPS = 150;

describe('cluster: every node answers as one server', () => {
  let kafka: KafkaHandle;
  let cluster: TestCluster | undefined;
  let reference: ReferenceServer | undefined;

  beforeAll(async () => {
    kafka = await kafkaBrokersForTest();
    reference = await startReference();
    cluster = await TestCluster.start({ brokers: kafka.brokers, nodes: 3, replicas: 1, partitions: 8 });
  });

  afterAll(async () => {
    await cluster?.stop();
    await reference?.stop();
    await kafka?.release();
  });

  it(`gives the single server's answers to a random workload (seed ${SEED})`, { timeout: 120_000 }, async () => {
    if (cluster === undefined || reference === undefined) throw new Error('not started');
    const nodes = cluster.nodes;
    const single = reference;
    const pickNode = rng(SEED ^ 0x5bd1e995);
    for (const [i, w] of workload(SEED, OPS).entries()) {
      const node = nodes[pickNode(nodes.length)];
      const want = await call(reference.url, w.method, w.path, w.body, w.headers);
      const got = await call(node.url, w.method, w.path, w.body, w.headers);
      expect(
        { status: got.status, body: normalised(got.body) },
        `request ${i} (${w.method} ${w.path} ${typeof w.body === 'string' ? w.body : ''}) at node ${node.n}\n${cluster.outputs()}`,
      ).toEqual({ status: want.status, body: normalised(want.body) });
    }

    // TopN reads ranked caches refreshed on a timer: refresh them first. One node is asked; it
    // asks the other members (each holder ranks its own shards).
    await callOk(reference.url, 'POST', '/recalculate-caches');
    await callOk(nodes[0].url, 'POST', '/recalculate-caches');

    const mismatches: string[] = [];
    const expectAlike = async (path: string, method: 'GET' | 'POST', body?: string): Promise<void> => {
      const want = await call(single.url, method, path, body);
      for (const node of nodes) {
        const got = await call(node.url, method, path, body);
        if (got.status !== want.status || normalised(got.body) !== normalised(want.body))
          mismatches.push(
            `node ${node.n} ${path} ${body ?? ''}:\n  cluster ${got.status} ${diffTail(got.body, want.body)}\n  single  ${want.status} ${diffTail(want.body, got.body)}`,
          );
      }
    };
    for (const [index, qs, pql] of READS) await expectAlike(`/index/${index}/query${qs}`, 'POST', pql);
    await expectAlike('/schema', 'GET');
    await expectAlike('/index/c', 'GET');
    await expectAlike('/internal/shards/max', 'GET');
    expect(mismatches, mismatches.join('\n')).toEqual([]);
  });
});

/** The part of `a` from a little before where it first differs from `b` (bodies are long). */
function diffTail(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 120);
  return `${from > 0 ? '…' : ''}${a.slice(from, from + 400)}`;
}
