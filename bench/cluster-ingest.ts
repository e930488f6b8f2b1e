// Issue 22, Kafka-fed ingest in cluster mode: the same topic (JSON arrays of 100 records, 10 bits
// each, 4 partitions) ingested by a single node and by a two-node cluster (R=1), in the same run,
// timed from the definition until the exactly-once total says every record is in. The cluster
// spreads the source partitions over its nodes, and each batch is one Kafka transaction of
// commands that the holders then apply; the figure is its rate against the single node's.
// BENCH_CLUSTER_INGEST_RECORDS sets the records (default 300k: 3M bits).
import { Kafka, logLevel } from 'kafkajs';
import { acquireKafka, type KafkaHandle } from '../test/helpers/kafka-broker.js';
import { type Cluster, startCluster, stopCluster } from './cluster.js';
import { HttpClient } from './lib/http-client.js';
import { createField, createIndex, query } from './lib/pilosa.js';
import type { Reporter } from './lib/report.js';
import { startChildServer } from './lib/server-child.js';
import { now } from './lib/stats.js';
import { fillTopic, type Shape } from './kafka-bench.js';

const RECORDS = Number(process.env.BENCH_CLUSTER_INGEST_RECORDS ?? 300_000);
const BITS_PER_RECORD = 10;
const WAIT_MS = 300_000;

export async function runClusterIngestBench(r: Reporter): Promise<void> {
  r.begin('cluster-ingest', 'Kafka-fed ingest: a two-node cluster against one node (issue 22)');
  let kafka: KafkaHandle;
  try {
    kafka = await acquireKafka();
  } catch (err) {
    r.note(`skipped: no Kafka broker could be started (${(err as Error).message.split('\n')[0]})`);
    return;
  }
  const shape: Shape = { label: 'JSON arrays of 100 records', perMessage: 100, records: RECORDS, target: false };
  const client = new Kafka({ clientId: 'bitledger-bench', brokers: kafka.brokers, logLevel: logLevel.NOTHING });
  try {
    const topic = await fillTopic(r, client, shape);
    const single = await startChildServer({
      label: 'ingest-single',
      extraArgs: ['--kafka-brokers', kafka.brokers.join(',')],
    });
    let singleMs: number;
    let want: string;
    try {
      singleMs = await timedIngest(single.url, topic, 'one');
      want = await probe(single.url);
    } finally {
      await single.dispose();
    }
    let cluster: Cluster | undefined;
    let clusterMs: number;
    try {
      cluster = await startCluster(kafka.brokers, 2, 8, 'ingest-cluster');
      clusterMs = await timedIngest(cluster.nodes[0].url, topic, 'two');
      for (const n of cluster.nodes) {
        const got = await probe(n.url);
        if (got !== want) throw new Error(`cluster node ${n.url} answers ${got}, the single node ${want}`);
      }
    } finally {
      if (cluster !== undefined) await stopCluster(cluster, kafka.brokers);
    }
    const bits = RECORDS * BITS_PER_RECORD;
    const singleRate = (bits / singleMs) * 1000;
    const clusterRate = (bits / clusterMs) * 1000;
    r.note(
      `${RECORDS.toLocaleString('en-US')} records (${bits.toLocaleString('en-US')} bits) in 4 source partitions; cluster: 2 nodes, R=1, 8 partitions, both on this machine with the broker`,
    );
    r.figure('Kafka-fed ingest, single node', singleRate, 'bits/s');
    r.figure('Kafka-fed ingest, two-node cluster', clusterRate, 'bits/s');
    r.figure('  … cluster / single node', clusterRate / singleRate, '×');
  } finally {
    await kafka.release();
  }
}

/** Defines the ingest at `url`; ms until GET /ingest/{name} counts every record. */
async function timedIngest(url: string, topic: string, name: string): Promise<number> {
  const c = new HttpClient(url);
  try {
    await createIndex(c, 'k', { trackExistence: true });
    await createField(c, 'k', 'f');
    const def = {
      topic,
      index: 'k',
      column: { field: 'id' },
      fields: [{ name: 'f', field: 'f', mapping: 'value-to-row' }],
    };
    const t0 = now();
    await c.ok('POST', `/ingest/${name}`, JSON.stringify(def));
    for (;;) {
      const g = JSON.parse((await c.ok('GET', `/ingest/${name}`)).toString('utf8')) as { records: number };
      if (g.records >= RECORDS) return now() - t0;
      if (now() - t0 > WAIT_MS) throw new Error(`ingest at ${url} stalled at ${g.records} records`);
      await new Promise((res) => setTimeout(res, 20));
    }
  } finally {
    c.close();
  }
}

/** A few counts, to check that both paths built the same index. */
async function probe(url: string): Promise<string> {
  const c = new HttpClient(url);
  try {
    const pql = Array.from({ length: 5 }, (_, j) => `Count(Row(f=${j * 199}))`).join('');
    return JSON.stringify((await query(c, 'k', pql)).results);
  } finally {
    c.close();
  }
}
