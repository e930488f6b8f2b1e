// Cluster mode with --auth-token-file: members call each other's internal routes (partials,
// write results, exports, shards max) with the file's first read-write token, so a cluster
// answers clients with tokens exactly as one node does, and refuses clients without one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, callOk, clusterForFile } from '../helpers/cluster.js';

const SHARD_WIDTH = 1 << 20;
const RW = { authorization: 'Bearer rw-secret-1' };
const RO = { authorization: 'Bearer ro-secret-2' };

describe('cluster: members use the token file with each other', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bl-cluster-auth-'));
  const file = join(dir, 'tokens');
  writeFileSync(file, '# tokens\nro-secret-2 read-only\nrw-secret-1 read-write\n');
  const cluster = clusterForFile({
    nodes: 2,
    replicas: 1,
    partitions: 4,
    extraArgs: ['--auth-token-file', file],
    headers: RW,
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('answers with tokens across nodes and refuses without one', { timeout: 90_000 }, async () => {
    const [a, b] = cluster().nodes;
    await callOk(a.url, 'POST', '/index/s', '{}', RW);
    await callOk(a.url, 'POST', '/index/s/field/f', '{}', RW);
    // Sets in 8 shards, so both nodes hold some: the write results come from the holders.
    const sets = Array.from({ length: 8 }, (_, s) => `Set(${s * SHARD_WIDTH + s}, f=1)`).join(' ');
    const wrote = JSON.parse(await callOk(b.url, 'POST', '/index/s/query', sets, RW)) as { results: boolean[] };
    expect(wrote.results).toEqual(Array(8).fill(true));
    // A read-only token reads through the fan-out (partials at the other member).
    for (const n of [a, b])
      expect(JSON.parse(await callOk(n.url, 'POST', '/index/s/query', 'Count(Row(f=1))', RO))).toEqual({
        results: [8],
      });
    expect(JSON.parse(await callOk(a.url, 'GET', '/internal/shards/max', undefined, RO))).toEqual({
      standard: { s: 7 },
    });
    // Every shard's export at either node (from its holder when it is not one).
    for (let s = 0; s < 8; s++) {
      const csv = await callOk(b.url, 'GET', `/export?index=s&field=f&shard=${s}`, undefined, {
        ...RO,
        accept: 'text/csv',
      });
      expect(csv.trim()).toBe(`1,${s * SHARD_WIDTH + s}`);
    }
    // No token: 401; a read-only token cannot write.
    expect((await call(a.url, 'POST', '/index/s/query', 'Count(Row(f=1))')).status).toBe(401);
    expect((await call(a.url, 'POST', '/index/s/query', 'Set(1, f=2)', RO)).status).toBe(403);
  });
});
