// Acceptance (issue 12): a Pilosa client's per-shard import (go-pilosa, java-pilosa): for each
// shard ask any node GET /internal/fragment/nodes?index=&shard= for its holders and POST the
// protobuf ImportRequest to one of them. The holders named must be the owners GET /cluster names
// for the shard's partition (docs/CLUSTER.md's partition function, recomputed here), the data must
// be complete at every node, and each shard's bits must have been applied on every holder the map
// names: GET /export (which Pilosa serves from the node's own fragments) at that holder.
import { describe, expect, it } from 'vitest';
import { encodeImportRequest, encodeImportValueRequest } from '../../src/encoding/import-request-encode.js';
import { call, callOk, owners, clusterForFile } from '../helpers/cluster.js';
import { referencePartitionOf } from '../helpers/partition-ref.js';

const SHARD_WIDTH = 1 << 20;
const SHARDS = 12;
const ROWS = 4;
const PER_SHARD = 300;
const PB = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };

interface FragmentNode {
  id: string;
  uri: { scheme: string; host: string; port: number };
}

/** The bits of shard s: PER_SHARD columns, row = (column · 7 + s) mod ROWS. */
function shardBits(s: number): { rowIds: number[]; columnIds: number[] } {
  const columnIds = Array.from({ length: PER_SHARD }, (_, k) => s * SHARD_WIDTH + k * 37);
  return { rowIds: columnIds.map((c) => (c * 7 + s) % ROWS), columnIds };
}

describe('cluster: per-shard imports to the nodes /internal/fragment/nodes names', () => {
  const cluster = clusterForFile({ nodes: 3, replicas: 2, partitions: 8 });

  it('lands every shard on the holders the map names', { timeout: 90_000 }, async () => {
    const c = cluster();
    const nodes = c.nodes;
    const map = await c.waitCovered({ settled: true });
    const byId = new Map(nodes.map((n) => [n.id, n]));
    await callOk(nodes[0].url, 'POST', '/index/p', '{}');
    await callOk(nodes[0].url, 'POST', '/index/p/field/f', '{}');

    const holdersOf = new Map<number, string[]>();
    for (let s = 0; s < SHARDS; s++) {
      const asked = nodes[s % nodes.length];
      const named = JSON.parse(
        await callOk(asked.url, 'GET', `/internal/fragment/nodes?index=p&shard=${s}`),
      ) as FragmentNode[];
      const ids = named.map((x) => x.id);
      const p = referencePartitionOf('p', s, c.partitions);
      // One holder (a client sends the shard to every node named: once), the asked one when it holds it.
      expect(ids, `shard ${s} (partition ${p}) named by node ${asked.n}`).toHaveLength(1);
      expect(owners(map, p, c.replicas)).toContain(ids[0]);
      if (owners(map, p, c.replicas).includes(asked.id)) expect(ids[0]).toBe(asked.id);
      for (const x of named) {
        const node = byId.get(x.id);
        expect(node, `fragment node ${x.id} is a member`).toBeDefined();
        expect(`${x.uri.scheme}://${x.uri.host}:${x.uri.port}`).toBe(node?.url);
      }
      holdersOf.set(s, ids);
      const target = named[s % named.length];
      const body = encodeImportRequest({ index: 'p', field: 'f', shard: s, ...shardBits(s) });
      await callOk(
        `${target.uri.scheme}://${target.uri.host}:${target.uri.port}`,
        'POST',
        '/index/p/field/f/import',
        body,
        PB,
      );
    }

    // Complete from every node, right away: the imports were acknowledged.
    for (let r = 0; r < ROWS; r++) {
      const want: number[] = [];
      for (let s = 0; s < SHARDS; s++) {
        const b = shardBits(s);
        b.columnIds.forEach((col, k) => {
          if (b.rowIds[k] === r) want.push(col);
        });
      }
      want.sort((a, b) => a - b);
      for (const node of nodes) {
        const got = JSON.parse(await callOk(node.url, 'POST', '/index/p/query', `Row(f=${r})`)) as {
          results: { columns: number[] }[];
        };
        expect(got.results[0].columns, `Row(f=${r}) at node ${node.n}`).toEqual(want);
      }
    }

    // The node that took a shard holds it caught up: it applied the import from the bytes it sent
    // (commands/feed.ts, own) rather than wait for its consumer to fetch them back; its other
    // holder read it from Kafka (checked below, by its export).
    let own = 0;
    for (const node of nodes) {
      const stages = JSON.parse(await callOk(node.url, 'GET', '/cluster')) as {
        node: { writeStages?: { ownApply?: { count: number } } };
      };
      own += stages.node.writeStages?.ownApply?.count ?? 0;
    }
    expect(own, 'imports applied by their coordinator from its own bytes').toBeGreaterThan(0);

    // Applied on each holder: its own export of the shard (polled: holders apply after the ack).
    for (let s = 0; s < SHARDS; s++) {
      const b = shardBits(s);
      const want = b.columnIds.map((col, k) => `${b.rowIds[k]},${col}`).sort();
      for (const id of holdersOf.get(s) ?? []) {
        const node = byId.get(id);
        if (node === undefined) throw new Error(`no node ${id}`);
        let got: string[] = [];
        const deadline = Date.now() + 20_000;
        for (;;) {
          const a = await call(node.url, 'GET', `/export?index=p&field=f&shard=${s}`, undefined, {
            accept: 'text/csv',
          });
          got =
            a.status === 200
              ? a.body
                  .split('\n')
                  .filter((l) => l !== '')
                  .sort()
              : [`${a.status} ${a.body}`];
          if (JSON.stringify(got) === JSON.stringify(want) || Date.now() > deadline) break;
          await new Promise((res) => setTimeout(res, 200));
        }
        expect(got, `shard ${s}'s export at its holder, node ${node.n}`).toEqual(want);
      }
      // A node that does not hold the shard answers the whole shard too (from a holder).
      for (const node of nodes.filter((x) => !(holdersOf.get(s) ?? []).includes(x.id))) {
        const a = await call(node.url, 'GET', `/export?index=p&field=f&shard=${s}`, undefined, { accept: 'text/csv' });
        const lines = a.body.split('\n').filter((l) => l !== '');
        expect(`${a.status} ${lines.sort().join(' ')}`, `shard ${s}'s export at node ${node.n}, not a holder`).toBe(
          `200 ${want.join(' ')}`,
        );
      }
    }
  });

  it("imports an int field's values at the node named for each shard", { timeout: 90_000 }, async () => {
    const c = cluster();
    const nodes = c.nodes;
    await callOk(nodes[0].url, 'POST', '/index/iv', '{}');
    await callOk(nodes[0].url, 'POST', '/index/iv/field/v', '{"options":{"type":"int","min":-1000,"max":1000}}');
    let sum = 0;
    let count = 0;
    for (let s = 0; s < 4; s++) {
      const [named] = JSON.parse(
        await callOk(nodes[s % 3].url, 'GET', `/internal/fragment/nodes?index=iv&shard=${s}`),
      ) as FragmentNode[];
      const columnIds = Array.from({ length: 50 }, (_, k) => s * SHARD_WIDTH + k * 11);
      const values = columnIds.map((_, k) => (k * 37 + s) % 2001).map((v) => v - 1000);
      sum += values.reduce((a, b) => a + b, 0);
      count += values.length;
      const body = encodeImportValueRequest({
        index: 'iv',
        field: 'v',
        shard: s,
        columnIds,
        values: values.map((v) => BigInt(v)),
      });
      await callOk(
        `${named.uri.scheme}://${named.uri.host}:${named.uri.port}`,
        'POST',
        '/index/iv/field/v/import',
        body,
        PB,
      );
    }
    for (const node of nodes) {
      const got = JSON.parse(await callOk(node.url, 'POST', '/index/iv/query', 'Sum(field=v)')) as {
        results: { value: number; count: number }[];
      };
      expect(got.results[0], `Sum(field=v) at node ${node.n}`).toEqual({ value: sum, count });
    }
  });

  // A client's import of one shard is often megabytes: more than Kafka's default message size
  // and, on a broker set up for tests, more than one log segment (ops/kafka uses 1 MiB).
  it('takes an import larger than one Kafka message', { timeout: 90_000 }, async () => {
    const c = cluster();
    const node = c.nodes[1];
    await callOk(node.url, 'POST', '/index/big', '{}');
    await callOk(node.url, 'POST', '/index/big/field/f', '{}');
    const n = 400_000;
    const columnIds = Array.from({ length: n }, (_, k) => 3 * SHARD_WIDTH + ((k * 7919) % SHARD_WIDTH));
    const rowIds = columnIds.map((_, k) => k % 3);
    const body = encodeImportRequest({ index: 'big', field: 'f', shard: 3, rowIds, columnIds });
    expect(body.byteLength).toBeGreaterThan(1536 * 1024);
    await callOk(node.url, 'POST', '/index/big/field/f/import', body, PB);
    const got = JSON.parse(
      await callOk(c.nodes[2].url, 'POST', '/index/big/query', 'Count(Row(f=0)) Count(Row(f=1)) Count(Row(f=2))'),
    ) as { results: number[] };
    expect(got.results).toEqual([133_334, 133_333, 133_333]);
  });
});
