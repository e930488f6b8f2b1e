// Acceptance (issue 22, backup and restore of a cluster) on a real broker and a real two-node
// cluster (R=1, 8 partitions): a seeded random workload, an online backup of the cluster (every
// node's snapshot with the positions it covers), more writes, then the cluster's answers to a fixed
// set of queries (Count, Row, TopN, Sum, GroupBy, Rows, keys) are noted at a time T, and the
// workload goes on. `bitledger restore --cluster-name … --to-time T` into a new directory — from the
// topics alone, and from the backup plus the topics after it — gives a plain single server that
// answers every one of those queries as the cluster did at T.
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupCommand } from '../../src/cli/backup.js';
import { restoreCommand } from '../../src/cli/restore.js';
import { call, callOk, TestCluster } from '../helpers/cluster.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { clockPast } from '../helpers/until.js';
import { removeDir, startServer, stopServer, tempDir } from '../helpers/server.js';
import { normalised, READS, SCHEMA, workload } from './cluster-workload.js';

const SEED = Number(process.env.CLUSTER_SEED ?? 22_004);
const silent = pino({ level: 'silent' });
const quiet = (): void => undefined;

/** Every READS answer at `url`, as "status body". */
async function answers(url: string): Promise<string[]> {
  const out: string[] = [];
  for (const [index, qs, pql] of READS) {
    const a = await call(url, 'POST', `/index/${index}/query${qs}`, pql);
    out.push(`${a.status} ${normalised(a.body)}`);
  }
  return out;
}

describe('cluster: backup and restore to a time', () => {
  let kafka: KafkaHandle;
  let cluster: TestCluster | undefined;
  const dirs: string[] = [];

  beforeAll(async () => {
    kafka = await kafkaBrokersForTest();
    cluster = await TestCluster.start({ brokers: kafka.brokers, nodes: 2, replicas: 1, partitions: 8 });
  });

  afterAll(async () => {
    await cluster?.stop();
    await kafka?.release();
    for (const d of dirs) removeDir(d);
  });

  it('into a single node that answers as the cluster did then', { timeout: 240_000 }, async () => {
    if (cluster === undefined) throw new Error('not started');
    const nodes = cluster.nodes;
    const send = async (reqs: ReturnType<typeof workload>, offset = 0): Promise<void> => {
      for (const [i, w] of reqs.entries())
        await call(nodes[(i + offset) % nodes.length].url, w.method, w.path, w.body, w.headers);
    };
    await send(workload(SEED, 60));
    const backup = tempDir('bitledger-cluster-backup-');
    dirs.push(backup);
    await backupCommand(['--url', nodes[1].url, '--to', backup], silent, quiet);
    await send(workload(SEED + 1, 40).slice(SCHEMA.length), 1);
    await callOk(nodes[0].url, 'POST', '/recalculate-caches');
    const then = await answers(nodes[0].url);
    const t = Date.now();
    await clockPast(t);
    await send(workload(SEED + 2, 40).slice(SCHEMA.length));
    await callOk(nodes[0].url, 'POST', '/recalculate-caches');
    expect(await answers(nodes[0].url)).not.toEqual(then);

    const at = new Date(t).toISOString();
    const brokers = kafka.brokers.join(',');
    for (const from of [[], ['--from', backup]]) {
      const dest = tempDir('bitledger-cluster-restored-');
      dirs.push(dest);
      removeDir(dest);
      const lines: string[] = [];
      const args = ['--cluster-name', cluster.name, '--kafka-brokers', brokers, '--to-time', at, '--data-dir', dest];
      await restoreCommand([...args, ...from], silent, (l) => lines.push(l));
      if (from.length > 0) expect(lines.join('\n')).toContain('from node');
      const single = await startServer({ dataDir: dest });
      try {
        const got = await answers(`http://127.0.0.1:${await single.listen()}`);
        const diff = READS.flatMap(([index, qs, pql], i) =>
          got[i] === then[i] ? [] : [`${index}${qs} ${pql}:\n  restored ${got[i]}\n  cluster  ${then[i]}`],
        );
        expect(diff, `restored ${from.length > 0 ? 'from the backup' : 'from the topics alone'}`).toEqual([]);
      } finally {
        await stopServer(single);
      }
    }
  });
});
