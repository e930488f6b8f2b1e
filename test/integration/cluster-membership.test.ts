// Cluster membership with a real broker and real LevelDB: three in-process nodes (each its own
// data directory and engine) form group NAME; the map, hand-over, restart and waits.
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Server, createServer } from '../../src/app.js';
import type { SinkFactory } from '../../src/cluster/membership/runtime.js';
import { encodePosition } from '../../src/cluster/commands/position.js';
import { type ClusterTopic, positionKey } from '../../src/cluster/types.js';
import { DEFAULTS, type Config } from '../../src/config/config.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { removeDir, tempDir } from '../helpers/temp.js';
import { referencePartitionOf } from '../helpers/partition-ref.js';

const P = 8;

interface TestNode {
  server: Server;
  dataDir: string;
  /** "topic/partition/offset" of every message its sink was handed. */
  delivered: string[];
}

/** Applies nothing, but commits each position as the real applier does (tests only). */
const recordingSink =
  (delivered: string[]): SinkFactory =>
  (_view, engine) => ({
    async deliver(topic: ClusterTopic, partition: number, messages, next: string) {
      for (const m of messages) delivered.push(`${topic}/${partition}/${m.offset}`);
      // A cluster node's engine refuses local writes: this sink applies as the cluster does.
      await engine.commit({
        cursors: [{ key: positionKey(topic, partition), value: encodePosition(next) }],
        origin: 'cluster',
      });
    },
  });

async function until<T>(
  what: string,
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 40_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('cluster membership (real broker, three nodes)', () => {
  let kafka: KafkaHandle;
  let name: string;
  const nodes: TestNode[] = [];

  async function startNode(dataDir = tempDir(), delivered: string[] = []): Promise<TestNode> {
    const cfg: Config = {
      ...DEFAULTS,
      bind: '127.0.0.1:0',
      dataDir,
      kafkaBrokers: kafka.brokers,
      clusterName: name,
      replicas: 2,
      clusterPartitions: P,
    };
    const server = await createServer(cfg, pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }), () => undefined, {
      clusterSink: recordingSink(delivered),
    });
    await server.listen();
    const node = { server, dataDir, delivered };
    nodes.push(node);
    return node;
  }

  const clusterOf = async (n: TestNode) => (await n.server.app.inject({ url: '/cluster' })).json();

  /** Every node's map: same generation, `count` members, R distinct holders per partition, NORMAL. */
  async function settled(live: TestNode[], count: number) {
    return until(`a settled map over ${count} nodes`, async () => {
      const views = await Promise.all(live.map(clusterOf));
      const gens = new Set(views.map((v) => v.generation));
      if (gens.size !== 1 || views[0].map === null) return false;
      for (const v of views) {
        if (v.members.length !== count || v.state !== 'NORMAL') return false;
        for (const e of v.map)
          if (e.holders.length !== Math.min(2, count) || new Set(e.holders).size !== e.holders.length) return false;
      }
      return views;
    });
  }

  beforeAll(async () => {
    kafka = await kafkaBrokersForTest();
    name = `cm-${randomUUID().slice(0, 8)}`;
  });

  afterAll(async () => {
    await Promise.all(nodes.map((n) => n.server.close().catch(() => undefined)));
    for (const n of nodes) removeDir(n.dataDir);
    await kafka?.release();
  });

  it('three nodes: every partition has two distinct holders, every node sees the same map', async () => {
    const [a, b, c] = [await startNode(), await startNode(), await startNode()];
    const views = await settled([a, b, c], 3);
    expect(views[1].map).toEqual(views[0].map);
    expect(views[2].map).toEqual(views[0].map);
    // Each node holds its share: 16 slots over 3 nodes.
    const loads = views.map((v) => v.node.partitions.length).sort();
    expect(loads).toEqual([5, 5, 6]);
    // /status: every member in Pilosa's shape, the cluster state.
    const status = (await a.server.app.inject({ url: '/status' })).json();
    expect(status.state).toBe('NORMAL');
    expect(status.nodes).toHaveLength(3);
    for (const n of status.nodes) expect(n.uri).toMatchObject({ scheme: 'http', host: '127.0.0.1' });
    // /internal/fragment/nodes: one holder of the shard's partition (the asked node when it holds it).
    const p = (views[0].map as { holders: string[] }[])[referencePartitionOf('i', 3, P)].holders;
    for (const n of [a, b, c]) {
      const named = (await n.server.app.inject({ url: '/internal/fragment/nodes?index=i&shard=3' }))
        .json()
        .map((x: { id: string }) => x.id);
      expect(named).toHaveLength(1);
      expect(p).toContain(named[0]);
      const self = (await n.server.app.inject({ url: '/status' })).json().localID;
      if (p.includes(self)) expect(named[0]).toBe(self);
    }
    // The cluster's routes and hooks are plugins of their own, and the topology routes answer
    // from the cluster's topology: /internal/nodes and 0.x /hosts list every member.
    const tree = a.server.app.printPlugins();
    for (const name of ['clusterHooks', 'clusterRoutes', 'kafkaHooks', 'kafkaRoutes']) expect(tree).toContain(name);
    expect((await a.server.app.inject({ url: '/internal/nodes' })).json()).toHaveLength(3);
    expect((await a.server.app.inject({ url: '/hosts' })).json()).toHaveLength(3);
  });

  it('a committed transaction over two partitions: each holder reaches the end offset (markers counted)', async () => {
    const client = new Kafka({ brokers: kafka.brokers, clientId: 'cm-test', logLevel: logLevel.NOTHING });
    const producer = client.producer({
      transactionalId: `cm-${randomUUID()}`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await producer.connect();
    const tx = await producer.transaction();
    await tx.send({
      topic: `${name}.log`,
      messages: [
        { partition: 0, value: 'x' },
        { partition: 1, value: 'y' },
      ],
    });
    await tx.commit();
    await producer.disconnect();
    const live = nodes.slice(0, 3);
    const rt0 = (await clusterOf(live[0])).map;
    for (const p of [0, 1]) {
      const end = await until('end offsets', async () => {
        const v = await clusterOf(live[0]);
        return v.node.endOffsetsError === undefined ? v : false;
      });
      expect(end).toBeDefined();
      for (const holderId of rt0[p].holders as string[]) {
        const n = await until('holder node', async () => {
          for (const x of live) if ((await clusterOf(x)).self.id === holderId) return x;
          return undefined;
        });
        const view = await until('partition on holder', async () => {
          const v = await clusterOf(n);
          const e = v.node.partitions.find((x: { partition: number }) => x.partition === p);
          return e !== undefined && e.end !== null && e.position === e.end && e.end !== '0' ? e : false;
        });
        // One record and one commit marker: the position is past the marker.
        expect(view.position).toBe('2');
        expect(n.delivered.filter((d) => d.startsWith(`log/${p}/`))).toEqual([`log/${p}/0`]);
      }
    }
  });

  it('a node stops (hand-over, leave): the others take its partitions; it restarts without re-delivery', async () => {
    const [a, b, c] = nodes.slice(0, 3);
    const cId = (await clusterOf(c)).self.id;
    const deliveredBefore = [...c.delivered];
    await c.server.close();
    nodes.splice(nodes.indexOf(c), 1);
    const two = await settled([a, b], 2);
    for (const e of two[0].map) expect(e.holders).not.toContain(cId);
    // Restart on the same data directory: positions come back, nothing applied is delivered again.
    const again = await startNode(c.dataDir, []);
    const three = await settled([a, b, again], 3);
    expect((await clusterOf(again)).self.id).toBe(cId);
    const mine = three[2].node.partitions.map((x: { partition: number }) => x.partition);
    for (const p of mine) {
      const before = deliveredBefore.filter((d) => d.startsWith(`log/${p}/`));
      for (const d of before) expect(again.delivered).not.toContain(d);
    }
    nodes.push({ ...again, dataDir: c.dataDir });
  });
});
