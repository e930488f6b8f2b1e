// The cluster write path end to end on real parts (a real broker, real LevelDB): requests sent to
// a cluster node's HTTP app go through the coordinators to NAME.meta / NAME.log, come back through
// a read-committed consumer into the applier, and every answer — writes, errors, the reads after
// them — equals a single non-cluster server's answer to the same requests. Also: a route that
// would write only locally is refused, and GET /internal/cluster/result answers a command's result.
import type { FastifyInstance } from 'fastify';
import type { Consumer, Kafka } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterImportService } from '../../src/cluster/coordination/import-coordinator.js';
import { ClusterFrameService } from '../../src/cluster/coordination/legacy-coordinator.js';
import { clusterResultRoute } from '../../src/cluster/coordination/result-route.js';
import { ClusterSchemaService } from '../../src/cluster/coordination/schema-coordinator.js';
import { ClusterQueryService } from '../../src/cluster/coordination/write-coordinator.js';
import { encodeImportRequest } from '../../src/encoding/import-request-encode.js';
import { buildHttpApp } from '../../src/http/app.js';
import { localTopology } from '../../src/http/topology.js';
import { runQueryAsync } from '../../src/service/query/index.js';
import { kafkaBrokersForTest } from '../helpers/kafka-broker.js';
import { type TestServer, removeDir, startServer, stopServer } from '../helpers/server.js';
import {
  type SoleNode,
  type TestEngine,
  consumeInto,
  createClusterTopics,
  newApplier,
  openEngine,
  silent,
  soleNode,
  testKafka,
} from './cluster-write-support.js';

let kafka: Kafka;
let single: TestServer;
let node: TestEngine & { dir: string };
let sole: SoleNode;
let consumer: Consumer;
let cluster: FastifyInstance;

beforeAll(async () => {
  const { brokers } = await kafkaBrokersForTest();
  kafka = testKafka(brokers);
  const name = await createClusterTopics(kafka);
  single = await startServer();
  node = await openEngine();
  const applier = newApplier(node.engine);
  consumer = await consumeInto(kafka, name, applier);
  sole = await soleNode(kafka, name, applier);
  const engine = node.engine;
  const reads = async (
    index: string,
    query: Parameters<typeof runQueryAsync>[2],
    opts: Parameters<typeof runQueryAsync>[3],
  ) => {
    await sole.caughtUp(); // what this node wrote before is applied before the read runs
    return engine.readAsync((h) => runQueryAsync(h, index, query, opts));
  };
  const imports = new ClusterImportService(engine, sole.writes);
  const self = () => ({ id: 'n1', scheme: 'http', host: '127.0.0.1', port: 1 });
  const frames = new ClusterFrameService(engine, sole.writes, async (index, pql) => {
    const opts = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };
    return (await new ClusterQueryService(engine, sole.writes, reads).execute(index, pql, opts)).response;
  });
  cluster = buildHttpApp(
    {
      engine,
      schema: new ClusterSchemaService(engine, sole.writes),
      query: new ClusterQueryService(engine, sole.writes, reads),
      imports,
      node: self,
      version: 'test',
      recalculateCaches: () => undefined,
      statusExtras: () => ({}),
      // As the cluster node's own topology (cluster/node.ts) wires them: frames, their inputs
      // and the import forwarder.
      topology: {
        ...localTopology('single', engine, imports, self),
        frames,
        inputs: frames.inputs,
        protobufForwarder: imports,
      },
    },
    silent,
    (err) => {
      throw err;
    },
  );
  clusterResultRoute(cluster, {
    results: applier.results,
    waitApplied: (t, p, n, s) => applier.waitApplied(t, p, n, s),
  });
  await cluster.ready();
}, 60_000);

afterAll(async () => {
  await consumer?.disconnect();
  await sole?.producer.stop();
  await cluster?.close();
  await node?.close();
  if (node !== undefined) removeDir(node.dir);
  await stopServer(single);
});

type Req = { method: 'GET' | 'POST' | 'DELETE'; url: string; body?: string | Buffer; type?: string };

async function both(r: Req): Promise<{ status: number; body: string }> {
  const send = (app: FastifyInstance) =>
    app.inject({
      method: r.method,
      url: r.url,
      ...(r.body === undefined ? {} : { payload: r.body }),
      headers: { 'content-type': r.type ?? 'text/plain' },
    });
  const [a, b] = [await send(single.app), await send(cluster)];
  expect({ url: r.url, body: String(r.body ?? ''), status: b.statusCode, answer: b.body }).toEqual({
    url: r.url,
    body: String(r.body ?? ''),
    status: a.statusCode,
    answer: a.body,
  });
  return { status: b.statusCode, body: b.body };
}

const q = (index: string, pql: string): Req => ({ method: 'POST', url: `/index/${index}/query`, body: pql });
const post = (url: string, body?: object): Req => ({
  method: 'POST',
  url,
  body: body === undefined ? '' : JSON.stringify(body),
  type: 'application/json',
});

const S = 1 << 20; // shard width

describe('cluster write path (one node, real broker): answers equal a single node', () => {
  it('schema, PQL writes over several partitions, keys, attributes, imports, and the reads after them', async () => {
    const steps: Req[] = [
      post('/index/i'),
      post('/index/i'),
      post('/index/i/field/f'),
      post('/index/i/field/g'),
      post('/index/i/field/m', { options: { type: 'mutex' } }),
      post('/index/i/field/v', { options: { type: 'int', min: -10, max: 1000 } }),
      post('/index/k', { options: { keys: true } }),
      post('/index/k/field/kf', { options: { keys: true } }),
      q('i', `Set(1, f=1) Set(${S + 2}, f=1) Set(${2 * S + 3}, f=2) Set(${3 * S + 4}, f=1) Set(5, g=1)`),
      q('i', 'Set(1, f=1)'),
      q('i', `Set(7, v=42) Set(${S + 7}, v=-3) Set(8, m=1) Set(8, m=2)`),
      q('i', 'Set(1, nope=1)'),
      q('i', 'Set(1, v=5000)'),
      q('i', 'Store(Row(f=1), g=2)'),
      q('i', `Count(Row(g=2)) ClearRow(f=1) Count(Row(f=1)) Set(${5 * S + 9}, f=3) Row(f=3)`),
      q('i', 'SetRowAttrs(f, 3, color="red") SetColumnAttrs(9, name="x")'),
      q('i', `Clear(${2 * S + 3}, f=2) Clear(${2 * S + 3}, f=2)`),
      q('i', 'Options(ClearRow(g=2), shards=[1, 3])'),
      post('/index/i/field/f/import', { rowIDs: [4, 4, 4, 5], columnIDs: [10, S + 10, 7 * S + 10, 11] }),
      post('/index/i/field/v/import', { columnIDs: [12, 6 * S + 1], values: [9, 11] }),
      post('/index/i/field/f/import?clear=true', { rowIDs: [4], columnIDs: [S + 10] }),
      post('/index/i/field/f/import', { shard: 1, rowIDs: [1], columnIDs: [5] }),
      {
        method: 'POST',
        url: '/index/i/field/g/import',
        body: Buffer.from(
          encodeImportRequest({ index: 'i', field: 'g', shard: 2, rowIds: [7, 7], columnIds: [2 * S, 2 * S + 1] }),
        ),
        type: 'application/x-protobuf',
      },
      q('k', 'Set("a", kf="x") Set("b", kf="y") Set("a", kf="y")'),
      post('/index/k/field/kf/import', { rowKeys: ['x', 'z'], columnKeys: ['c', 'a'] }),
      post('/index/k/field/kf/import?clear=true', { rowKeys: ['never', 'x'], columnKeys: ['c', 'nobody'] }),
      post('/index/i/field/zz'),
      { method: 'DELETE', url: '/index/i/field/zz' },
    ];
    for (const s of steps) await both(s);
    // Reads over everything written, after the writes above.
    for (const pql of [
      'Row(f=1)',
      'Row(f=2)',
      'Row(f=3)',
      'Row(f=4)',
      'Row(f=5)',
      'Row(g=1)',
      'Row(g=2)',
      'Row(g=7)',
      'Row(m=1)',
      'Row(m=2)',
      'Sum(field=v)',
      'Min(field=v)',
      'Count(Row(v > 0))',
    ])
      await both({ ...q('i', pql), url: '/index/i/query?columnAttrs=true' });
    for (const pql of ['Row(kf="x")', 'Row(kf="y")', 'Row(kf="z")', 'Rows(kf)']) await both(q('k', pql));
  }, 120_000);

  it('0.x input definitions: defined, read, ingested over several shards and deleted as on one node', async () => {
    const def = {
      frames: [{ name: 'event', options: { timeQuantum: 'YMD' } }, { name: 'color' }],
      fields: [
        { name: 'columnID', primaryKey: true },
        { name: 'ts', actions: [{ frame: 'event', valueDestination: 'set-timestamp' }] },
        { name: 'kind', actions: [{ frame: 'event', valueDestination: 'mapping', valueMap: { click: 1, view: 2 } }] },
        { name: 'color', actions: [{ frame: 'color', valueDestination: 'value-to-row' }] },
      ],
    };
    const records = [
      { columnID: 1, kind: 'click', color: 3, ts: '2018-01-02T03:04' },
      { columnID: S + 5, kind: 'view', color: 4 },
      { columnID: 3 * S + 9, kind: 'click', color: 3 },
    ];
    for (const r of [
      post('/index/in'),
      post('/index/in/input-definition/d', def),
      post('/index/in/input-definition/d', def),
      { method: 'GET', url: '/index/in/input-definition/d' } as Req,
      post('/index/in/input/d', records),
      post('/index/in/input/d', [{ columnID: 2, nope: 1 }]),
      post('/index/in/input/nope', records),
      q('in', 'Row(event=1)'),
      q('in', 'Row(event=2)'),
      q('in', 'Row(color=3)'),
      q('in', 'Range(event=1, 2018-01-01T00:00, 2018-01-03T00:00)'),
      { method: 'DELETE', url: '/index/in/input-definition/d' } as Req,
      { method: 'GET', url: '/index/in/input-definition/d' } as Req,
    ])
      await both(r);
  }, 60_000);

  it('answers results by offset', async () => {
    const at = await sole.writes.log([
      { kind: 'pql', index: 'i', pql: 'Set(100, f=9)', partition: 0, metaOffset: sole.writes.metaOffset() },
    ]);
    const res = await cluster.inject({
      method: 'GET',
      url: `/internal/cluster/result?topic=log&partition=0&offset=${at[0].offset}`,
    });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ ok: true, value: [{ type: 'changed', changed: true }] });
    const bad = await sole.writes.log([
      { kind: 'pql', index: 'i', pql: 'Set(100, nope=9)', partition: 0, metaOffset: sole.writes.metaOffset() },
    ]);
    const res2 = await cluster.inject({
      method: 'GET',
      url: `/internal/cluster/result?topic=log&partition=0&offset=${bad[0].offset}`,
    });
    expect(res2.statusCode).toBe(404);
    expect(JSON.parse(res2.body)).toMatchObject({ ok: false, message: 'executing: field not found: nope' });
  }, 60_000);
});
