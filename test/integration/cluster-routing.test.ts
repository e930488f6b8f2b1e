// Cluster mode as Pilosa clients meet it (issue 21), on a real broker with three nodes and R=2:
// key translation at any node, read-your-schema across nodes under concurrency, one live holder
// per shard in /internal/fragment/nodes, the 0.x routes answering cluster-wide, and a SIGKILLed
// node leaving READY and the fragment nodes within 3 s (the last test: it kills a node).
import { describe, expect, it } from 'vitest';
import { encodeImportRequest, encodeImportValueRequest } from '../../src/encoding/import-request-encode.js';
import { decodeTranslateKeysResponse, encodeTranslateKeysRequest } from '../../src/encoding/public-proto.js';
import { referencePartitionOf } from '../helpers/partition-ref.js';
import { call, callOk, clusterForFile, owners } from '../helpers/cluster.js';
import { until } from '../helpers/until.js';

const PB = { 'content-type': 'application/x-protobuf', accept: 'application/x-protobuf' };
const SHARD_WIDTH = 1 << 20;

type PilosaNode = {
  id: string;
  uri: { scheme: string; host: string; port: number };
  isCoordinator: boolean;
  state: string;
};

async function translate(url: string, index: string, field: string, keys: string[]): Promise<number[]> {
  const r = await fetch(`${url}/internal/translate/keys`, {
    method: 'POST',
    headers: PB,
    body: Buffer.from(encodeTranslateKeysRequest({ index, field, keys })),
  });
  if (r.status !== 200) throw new Error(`translate at ${url} → ${r.status}: ${await r.text()}`);
  return decodeTranslateKeysResponse(new Uint8Array(await r.arrayBuffer()));
}

const json = async <T>(url: string, path: string): Promise<T> => JSON.parse(await callOk(url, 'GET', path)) as T;

describe('cluster: routing as clients see it (3 nodes, R=2, real broker)', () => {
  const cluster = clusterForFile({ nodes: 3, replicas: 2, partitions: 8 });

  it('translates keys at any node, through the meta topic: every node gives the same IDs', {
    timeout: 90_000,
  }, async () => {
    const [a, b, c] = cluster().nodes;
    await callOk(a.url, 'POST', '/index/k', JSON.stringify({ options: { keys: true } }));
    await callOk(a.url, 'POST', '/index/k/field/f', JSON.stringify({ options: { keys: true } }));
    // Column keys at b (not the node that created the index), overlapping ones at c.
    const first = await translate(b.url, 'k', '', ['c1', 'c2', 'c3']);
    expect(new Set(first).size).toBe(3);
    const second = await translate(c.url, 'k', '', ['c3', 'c4', 'c1']);
    expect(second[0]).toBe(first[2]);
    expect(second[2]).toBe(first[0]);
    expect(first).not.toContain(second[1]);
    // Known keys answer the same at every node, at once (read-your-writes for keys).
    for (const n of [a, b, c])
      expect(await translate(n.url, 'k', '', ['c1', 'c2', 'c3', 'c4'])).toEqual([...first, second[1]]);
    // Row keys of a field at c, the same at b; a keyed import at a assigns c5 through the meta topic
    // too, and every node then translates it alike.
    const rows = await translate(c.url, 'k', 'f', ['r1', 'r2']);
    expect(await translate(b.url, 'k', 'f', ['r2'])).toEqual([rows[1]]);
    const body = encodeImportRequest({
      index: 'k',
      field: 'f',
      shard: 0,
      rowKeys: ['r1', 'r1', 'r2', 'r2'],
      columnKeys: ['c1', 'c2', 'c4', 'c5'],
    });
    await callOk(a.url, 'POST', '/index/k/field/f/import', body, PB);
    const c5 = await translate(b.url, 'k', '', ['c5']);
    expect(await translate(c.url, 'k', '', ['c5'])).toEqual(c5);
    expect([...first, second[1]]).not.toContain(c5[0]);
    for (const n of [a, b, c]) {
      const got = JSON.parse(await callOk(n.url, 'POST', '/index/k/query', 'Row(f="r1") Row(f="r2")')) as {
        results: { keys: string[] }[];
      };
      expect(got.results.map((r) => [...r.keys].sort())).toEqual([
        ['c1', 'c2'],
        ['c4', 'c5'],
      ]);
    }
    // A single node's errors: unknown index 404, a field without keys 400.
    expect(
      (
        await call(
          b.url,
          'POST',
          '/internal/translate/keys',
          encodeTranslateKeysRequest({ index: 'nope', field: '', keys: ['x'] }),
          PB,
        )
      ).status,
    ).toBe(404);
    await callOk(a.url, 'POST', '/index/k/field/plain', '{}');
    expect(
      (
        await call(
          c.url,
          'POST',
          '/internal/translate/keys',
          encodeTranslateKeysRequest({ index: 'k', field: 'plain', keys: ['x'] }),
          PB,
        )
      ).status,
    ).toBe(400);
  });

  it('read-your-schema: a field created at one node is used at once at another, many times, concurrently', {
    timeout: 120_000,
  }, async () => {
    const nodes = cluster().nodes;
    await callOk(nodes[0].url, 'POST', '/index/rs', '{}');
    const failures: string[] = [];
    let requests = 0;
    const client = async (w: number): Promise<void> => {
      for (let r = 0; r < 8; r++) {
        const creator = nodes[(w + r) % 3];
        const user = nodes[(w + r + 1) % 3];
        const other = nodes[(w + r + 2) % 3];
        const f = `f${w}_${r}`;
        await callOk(creator.url, 'POST', `/index/rs/field/${f}`, '{}');
        const imp = encodeImportRequest({ index: 'rs', field: f, shard: 0, rowIds: [1], columnIds: [w * 100 + r] });
        const answers = await Promise.all([
          call(user.url, 'POST', `/index/rs/field/${f}/import`, imp, PB),
          call(other.url, 'POST', '/index/rs/query', `Set(${w * 100 + r + 1}, ${f}=2)`),
        ]);
        requests += answers.length;
        for (const x of answers) if (x.status !== 200) failures.push(`${f}: ${x.status} ${x.body}`);
      }
    };
    await Promise.all([0, 1, 2, 3].map(client));
    expect(failures, `${failures.length} of ${requests} requests failed`).toEqual([]);
    expect(requests).toBe(64);
  });

  it('names exactly one live caught-up holder per shard, this node first when it holds it', {
    timeout: 90_000,
  }, async () => {
    const c = cluster();
    const map = await c.waitCovered({ settled: true });
    await callOk(c.nodes[0].url, 'POST', '/index/fn', '{}');
    await callOk(c.nodes[0].url, 'POST', '/index/fn/field/f', '{}');
    for (let s = 0; s < 16; s++) {
      const p = referencePartitionOf('fn', s, c.partitions);
      const holders = owners(map, p, c.replicas);
      for (const asked of c.nodes) {
        const named = await json<PilosaNode[]>(asked.url, `/internal/fragment/nodes?index=fn&shard=${s}`);
        expect(named, `shard ${s} asked at node ${asked.n}`).toHaveLength(1);
        expect(holders).toContain(named[0].id);
        if (holders.includes(asked.id)) expect(named[0].id).toBe(asked.id);
        expect(named[0].state).toBe('READY');
        // 0.x /fragment/nodes names the same node.
        const legacy = await json<(PilosaNode & { host: string })[]>(asked.url, `/fragment/nodes?index=fn&slice=${s}`);
        expect(legacy.map((x) => x.id)).toEqual([named[0].id]);
        expect(legacy[0].host).toBe(`${named[0].uri.host}:${named[0].uri.port}`);
      }
      // A client sends the shard's import to the one node named: it enters the cluster once.
      const to = c.nodes.find((n) => n.id === (holders.includes(c.nodes[0].id) ? c.nodes[0].id : holders[0]));
      const body = encodeImportRequest({
        index: 'fn',
        field: 'f',
        shard: s,
        rowIds: [1],
        columnIds: [s * SHARD_WIDTH + 3],
      });
      await callOk(to?.url ?? '', 'POST', '/index/fn/field/f/import', body, PB);
    }
    expect(JSON.parse(await callOk(c.nodes[2].url, 'POST', '/index/fn/query', 'Count(Row(f=1))'))).toEqual({
      results: [16],
    });
  });

  it('0.x frame writes, /import-value, /hosts, /internal/nodes and /slices/max answer as one node does', {
    timeout: 90_000,
  }, async () => {
    const [a, b, c] = cluster().nodes;
    await callOk(a.url, 'POST', '/index/lx', JSON.stringify({ options: { columnLabel: 'user' } }));
    await callOk(
      b.url,
      'POST',
      '/index/lx/frame/fr',
      JSON.stringify({ options: { fields: [{ name: 'x', type: 'int', min: 0, max: 100 }] } }),
    );
    // The frame's int field at c at once (read-your-writes), value import at a through the cluster.
    const fields = await json<{ fields: { name: string }[] }>(c.url, '/index/lx/frame/fr/fields');
    expect(fields.fields.map((f) => f.name)).toEqual(['x']);
    const base = encodeImportValueRequest({
      index: 'lx',
      field: 'fr',
      shard: 2,
      columnIds: [2 * SHARD_WIDTH + 1, 2 * SHARD_WIDTH + 2],
      values: [5n, 50n],
    });
    const name = Buffer.from('x');
    const legacyValues = Buffer.concat([base, Buffer.from([(4 << 3) | 2, name.length]), name]);
    expect((await call(c.url, 'POST', '/import-value', legacyValues, PB)).status).toBe(200);
    expect(JSON.parse(await callOk(b.url, 'POST', '/index/lx/query', 'Count(Range(frame=fr, x > 10))'))).toEqual({
      results: [1],
    });
    // A value out of the int field's range: the single node's 400, nothing sent.
    const bad = encodeImportValueRequest({ index: 'lx', field: 'fr', shard: 0, columnIds: [1], values: [500n] });
    expect(
      (await call(a.url, 'POST', '/import-value', Buffer.concat([bad, Buffer.from([(4 << 3) | 2, 1, 0x78])]), PB))
        .status,
    ).toBe(400);
    // Time quantum of a frame: refused once any holder has its bits.
    await callOk(a.url, 'POST', '/index/lx/frame/t', '{}');
    await callOk(c.url, 'PATCH', '/index/lx/frame/t/time-quantum', JSON.stringify({ timeQuantum: 'YM' }));
    await callOk(a.url, 'POST', '/index/lx/query', `Set(${5 * SHARD_WIDTH}, t=1)`);
    expect(
      (await call(b.url, 'PATCH', '/index/lx/frame/t/time-quantum', JSON.stringify({ timeQuantum: 'YMD' }))).status,
    ).toBe(400);
    await callOk(c.url, 'DELETE', '/index/lx/frame/t');
    expect((await call(b.url, 'POST', '/index/lx/query', 'Row(t=1)')).status).toBeGreaterThanOrEqual(400);
    // Members everywhere, each node its own coordinator.
    for (const n of [a, b, c]) {
      const hosts = await json<(PilosaNode & { host: string })[]>(n.url, '/hosts');
      expect(hosts.map((h) => h.id).sort()).toEqual([a.id, b.id, c.id].sort());
      expect(hosts.find((h) => h.isCoordinator)?.id).toBe(n.id);
      const internal = await json<PilosaNode[]>(n.url, '/internal/nodes');
      expect(internal.map((h) => h.id).sort()).toEqual([a.id, b.id, c.id].sort());
      const status = await json<{ nodes: PilosaNode[] }>(n.url, '/status');
      expect(status.nodes.filter((x) => x.isCoordinator).map((x) => x.id)).toEqual([n.id]);
      const slices = await json<{ standard: Record<string, number>; maxSlices: Record<string, number> }>(
        n.url,
        '/slices/max',
      );
      expect(slices.standard.lx).toBe(5);
      expect(slices.maxSlices.lx).toBe(5);
    }
  });

  it('a SIGKILLed node is not READY in /status and gone from the fragment nodes within 3 s; DEGRADED meanwhile', {
    timeout: 90_000,
  }, async () => {
    const c = cluster();
    await c.waitCovered({ settled: true });
    const [a, b, victim] = c.nodes;
    await callOk(a.url, 'POST', '/index/dk', '{}');
    // Shards the victim is named for (it holds them and is asked itself, or is the first holder).
    const named = async (n: typeof a, s: number) =>
      (await json<PilosaNode[]>(n.url, `/internal/fragment/nodes?index=dk&shard=${s}`)).map((x) => x.id);
    const shards: number[] = [];
    for (let s = 0; s < 64; s++) if ((await named(victim, s))[0] === victim.id) shards.push(s);
    expect(shards.length).toBeGreaterThan(0);
    for (const n of [a, b]) {
      const status = await json<{ state: string; nodes: PilosaNode[] }>(n.url, '/status');
      expect(status.state).toBe('NORMAL');
      expect(status.nodes.find((x) => x.id === victim.id)?.state).toBe('READY');
    }
    const killedAt = Date.now();
    await c.signal(victim, 'SIGKILL');
    // Each live node is asked, in parallel, for its /status and the fragment nodes of a few of those
    // shards; the time counted is when its answers came back (conservative under load).
    const watched = shards.slice(0, 4);
    const seen = new Map<string, number>();
    const gone = async (n: typeof a): Promise<boolean> => {
      const [status, lists] = await Promise.all([
        json<{ state: string; nodes: PilosaNode[] }>(n.url, '/status'),
        Promise.all(watched.map((s) => named(n, s))),
      ]);
      const state = status.nodes.find((x) => x.id === victim.id)?.state;
      return state !== 'READY' && status.state === 'DEGRADED' && lists.every((l) => !l.includes(victim.id));
    };
    await until(
      async () => {
        await Promise.all(
          [a, b].map(async (n) => {
            if (!seen.has(n.id) && (await gone(n))) seen.set(n.id, Date.now() - killedAt);
          }),
        );
        return seen.size === 2;
      },
      {
        timeoutMs: 30_000,
        stepMs: 20,
        what: 'the killed node to leave READY and the fragment nodes at both live nodes',
      },
    );
    console.log(`SIGKILL → not READY, DEGRADED, out of fragment nodes: ${[...seen.values()].join(' ms, ')} ms`);
    for (const [id, ms] of seen) expect(ms, `node ${id} saw the kill after ${ms} ms`).toBeLessThanOrEqual(3_000);
    // Writes keep working, and the fragment nodes name live holders only.
    for (const s of shards.slice(0, 4)) {
      const to = (await json<PilosaNode[]>(a.url, `/internal/fragment/nodes?index=dk&shard=${s}`))[0];
      expect([a.id, b.id]).toContain(to.id);
    }
  });
});
