// A cluster holder's local commits are written without their own fsync (cluster/commands/
// applier.ts): a command's durability is Kafka's. This cuts the power of a one-node cluster (it
// holds and coordinates every partition) right after acknowledged protobuf imports: SIGKILL, then
// every file of its data directory cut back to its last fsync (test/helpers/power-cut.ts). The
// unsynced tail of its LevelDB log is gone, and after the restart every acknowledged bit is there
// again, replayed from the topics from the position its log kept. A round in which the cut dropped nothing of the log proves nothing: at least one must
// drop some (the log is synced within a second of an unsynced commit, and the kill comes at once).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basename, join } from 'node:path';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { TestCluster, callOk } from '../helpers/cluster.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { buildSyncLedgerShim, cutPower, syncLedgerEnv } from '../helpers/power-cut.js';
import { removeDir, tempDir } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const ROUNDS = 3;
const IMPORTS = 8;
const BITS = 20_000;
const SHARD = 2 ** 20;

let workDir = '';
let shim = '';
let kafka: KafkaHandle | undefined;
let cluster: TestCluster | undefined;
const ledgerOf = (dataDir: string): string => join(workDir, `${basename(dataDir)}.ledger`);

beforeAll(async () => {
  workDir = tempDir('bitledger-cluster-powercut-');
  shim = buildSyncLedgerShim(workDir);
  kafka = await kafkaBrokersForTest();
  cluster = await TestCluster.start({
    brokers: kafka.brokers,
    nodes: 1,
    partitions: 4,
    env: (dataDir) => syncLedgerEnv(shim, ledgerOf(dataDir), dataDir),
  });
});

afterAll(async () => {
  await cluster?.stop();
  await kafka?.release();
  removeDir(workDir);
});

/** One row's bits in one shard: distinct columns, so every bit is one column of the row. */
function body(row: number, shard: number, from: number): { body: Buffer; columns: number[] } {
  const columns = Array.from({ length: BITS }, (_, i) => shard * SHARD + from + i);
  const rowIds = new Array<number>(BITS).fill(row);
  return {
    body: Buffer.from(encodeImportRequest({ index: 'c', field: 'f', shard, rowIds, columnIds: columns })),
    columns,
  };
}

async function rowColumns(url: string, row: number): Promise<Set<number>> {
  const res = await fetch(`${url}/index/c/query`, { method: 'POST', body: `Row(f=${row})` });
  if (res.status !== 200) return new Set();
  return new Set(((await res.json()) as { results: { columns: number[] }[] }).results[0].columns);
}

describe('cluster: a holder loses its unsynced local commits in a power cut', () => {
  it('has every acknowledged import again after its restart, replayed from Kafka', { timeout: 240_000 }, async () => {
    const c = cluster as TestCluster;
    let node = c.nodes[0];
    await callOk(node.url, 'POST', '/index/c', '');
    await callOk(node.url, 'POST', '/index/c/field/f', '');
    const acked: number[][] = [];
    const logDropped: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const columns: number[] = [];
      for (let k = 0; k < IMPORTS; k++) {
        const b = body(round, k % 4, Math.floor(k / 4) * BITS);
        const res = await fetch(`${node.url}/index/c/field/f/import`, {
          method: 'POST',
          body: b.body,
          headers: { 'content-type': 'application/x-protobuf' },
        });
        expect(res.status, await res.text()).toBe(200);
        columns.push(...b.columns);
      }
      acked.push(columns);
      await c.signal(node, 'SIGKILL');
      const cut = cutPower(node.dataDir, ledgerOf(node.dataDir));
      logDropped.push([...cut.cut].filter(([path]) => path.endsWith('.log')).reduce((n, [, b]) => n + b, 0));
      node = await c.relaunch(node);
      // Every round's bits, this one's replayed from the topic (a read waits until it caught up).
      for (const [row, cols] of acked.entries()) {
        let present = new Set<number>();
        await until(
          async () => {
            present = await rowColumns(node.url, row);
            return present.size >= cols.length;
          },
          { timeoutMs: 120_000, what: `row ${row}'s ${cols.length} acknowledged bits after round ${round}'s cut` },
        );
        expect(
          cols.filter((col) => !present.has(col)),
          `round ${round}, row ${row}: acknowledged, missing`,
        ).toEqual([]);
        expect(present.size).toBe(cols.length);
      }
    }
    console.log(`[cluster-power-cut] log bytes dropped by each cut: ${logDropped.join(', ')}`);
    expect(
      logDropped.some((b) => b > 0),
      'no cut dropped any of the log: nothing was replayed',
    ).toBe(true);
  });
});
