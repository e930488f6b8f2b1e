// Acceptance (issue 22, history in cluster mode): atTime reads on a real two-node cluster (real
// broker, real processes, R=1, 8 partitions). Every write goes to node 0; the reads go to node 1,
// which coordinated none of them and holds only some partitions (the others' past states come
// from node 0). After a first part of a seeded random workload the live answers of a fixed set
// of queries are taken; after more writes, deletes and a new field, the same queries at node 1
// with atTime = the moment between the two parts must give those answers again, word for word.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callOk, TestCluster } from '../helpers/cluster.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { clockPast } from '../helpers/until.js';
import { normalised, READS, SCHEMA, workload } from './cluster-workload.js';

const SEED = Number(process.env.CLUSTER_SEED ?? 22_022);

describe('cluster: atTime reads', () => {
  let kafka: KafkaHandle;
  let cluster: TestCluster | undefined;

  beforeAll(async () => {
    kafka = await kafkaBrokersForTest();
    cluster = await TestCluster.start({ brokers: kafka.brokers, nodes: 2, replicas: 1, partitions: 8 });
  });

  afterAll(async () => {
    await cluster?.stop();
    await kafka?.release();
  });

  it('answer at a node that coordinated no write as the cluster did then', { timeout: 150_000 }, async () => {
    if (cluster === undefined) throw new Error('not started');
    const [writer, reader] = cluster.nodes;
    const before = Date.now();
    await clockPast(before);
    const send = async (reqs: ReturnType<typeof workload>): Promise<void> => {
      for (const w of reqs) await call(writer.url, w.method, w.path, w.body, w.headers);
    };
    await send(workload(SEED, 80));
    // TopN reads the ranked caches a recalculation refreshes; past states rank on first use.
    await callOk(writer.url, 'POST', '/recalculate-caches');
    const then: string[] = [];
    for (const [index, qs, pql] of READS) {
      const a = await call(reader.url, 'POST', `/index/${index}/query${qs}`, pql);
      then.push(`${a.status} ${normalised(a.body)}`);
    }
    const t1 = Date.now();
    await clockPast(t1);

    // Everything changes after t1: more writes (deletes included), a new field, a new index.
    await send(workload(SEED + 1, 60).slice(SCHEMA.length));
    await callOk(writer.url, 'POST', '/index/c/field/late', '{}');
    await callOk(writer.url, 'POST', '/index/c/query', 'Set(1, late=1) ClearRow(s=1) Set(2, s=1)');
    await callOk(writer.url, 'POST', '/recalculate-caches');

    const at = `atTime=${encodeURIComponent(new Date(t1).toISOString())}`;
    const mismatches: string[] = [];
    let changed = 0;
    for (const [i, [index, qs, pql]] of READS.entries()) {
      const sep = qs === '' ? '?' : '&';
      const past = await call(reader.url, 'POST', `/index/${index}/query${qs}${sep}${at}`, pql);
      const got = `${past.status} ${normalised(past.body)}`;
      if (got !== then[i]) mismatches.push(`${index} ${qs} ${pql}:\n  atTime ${got}\n  then   ${then[i]}`);
      const live = await call(reader.url, 'POST', `/index/${index}/query${qs}`, pql);
      if (`${live.status} ${normalised(live.body)}` !== then[i]) changed++;
    }
    expect(mismatches, cluster.outputs()).toEqual([]);
    // The workload after t1 did change the answers: the reads above were not of an unchanged state.
    expect(changed).toBeGreaterThan(READS.length / 4);

    // A field created after t1 did not exist then; nothing existed before the first write.
    const late = await call(reader.url, 'POST', `/index/c/query?${at}`, 'Count(Row(late=1))');
    expect(late.status).toBe(404);
    expect((await call(reader.url, 'POST', '/index/c/query', 'Count(Row(late=1))')).body).toContain('[1]');
    const beforeAll = `atTime=${encodeURIComponent(new Date(before).toISOString())}`;
    expect((await call(reader.url, 'POST', `/index/c/query?${beforeAll}`, 'Count(Row(s=1))')).status).toBe(404);
    // A cluster has no single sequence: atSeq is refused, with the way out.
    const seq = await call(reader.url, 'POST', '/index/c/query?atSeq=3', 'Count(Row(s=1))');
    expect(seq.status).toBe(400);
    expect(seq.body).toContain('atTime');
    // The past is read-only.
    const w = await call(reader.url, 'POST', `/index/c/query?${at}`, 'Set(5, s=1)');
    expect(w.status).toBe(400);
  });
});
