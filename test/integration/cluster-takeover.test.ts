// Acceptance (issue 21, item 5): a node that joins takes its partition over from a live holder's
// snapshot instead of reading the partition's history from the topic. One node (R=1, 2
// partitions) takes a history of sets, clears, a ClearRow and int values; a second node joins and
// is given one partition; GET /cluster at the joiner lists that partition as taken over from the
// first node at the position its snapshot covers, and the joiner answers for the partition's
// shards exactly as the first node did before the join — also after writes made since, which it
// reads from the topic on from that position. Fails when the joiner replays the topic instead (no
// takeover listed) or installs a wrong state (answers differ).
import { describe, expect, it } from 'vitest';
import { callOk, clusterForFile, owners } from '../helpers/cluster.js';
import { referencePartitionOf } from '../helpers/partition-ref.js';

const W = 1 << 20;
const SHARDS = 8;
const PARTITIONS = 2;

/** Per shard: row counts of f, the sum of n, and the columns of row 1. */
async function answers(url: string, shards: number[]): Promise<string[]> {
  const out: string[] = [];
  for (const s of shards) {
    const pql = `Options(Count(Row(f=1)), shards=[${s}])Options(Count(Row(f=2)), shards=[${s}])Options(Sum(field=n), shards=[${s}])Options(Row(f=1), shards=[${s}])`;
    out.push(`${s}: ${await callOk(url, 'POST', '/index/t/query', pql)}`);
  }
  return out;
}

interface TakenOver {
  partition: number;
  holder: string;
  next: string;
}

describe('cluster: takeover from a snapshot', () => {
  const cluster = clusterForFile({ nodes: 1, replicas: 1, partitions: PARTITIONS });

  it('a joining node installs its partition from the holder and reads on from there', {
    timeout: 180_000,
  }, async () => {
    const c = cluster();
    const first = c.nodes[0];
    await callOk(first.url, 'POST', '/index/t', '{}');
    await callOk(first.url, 'POST', '/index/t/field/f', '{}');
    await callOk(first.url, 'POST', '/index/t/field/n', '{"options":{"type":"int","min":0,"max":100000}}');
    // A history: 80 write queries over every shard (each one command per partition), a ClearRow.
    for (let i = 0; i < 80; i++) {
      const calls: string[] = [];
      for (let s = 0; s < SHARDS; s++) {
        const col = s * W + ((i * 7919) % 5000);
        calls.push(`Set(${col}, f=${1 + (i % 2)})`, `Set(${col}, n=${i * 10 + s})`);
        if (i % 3 === 0) calls.push(`Clear(${s * W + ((i * 31) % 5000)}, f=1)`);
      }
      if (i === 40) calls.push('ClearRow(f=2)');
      await callOk(first.url, 'POST', '/index/t/query', calls.join(''));
    }
    const shards = Array.from({ length: SHARDS }, (_, s) => s);
    const before = await answers(first.url, shards);

    const joiner = await c.add({ wait: false });
    const map = await c.waitCovered({ settled: true });
    const taken = [...map.holders.keys()].filter((p) => owners(map, p, 1).includes(joiner.id));
    expect(taken.length, JSON.stringify(map.holders)).toBe(1);
    const p = taken[0];
    const mine = shards.filter((s) => referencePartitionOf('t', s, PARTITIONS) === p);
    expect(mine.length).toBeGreaterThan(0);

    const node = JSON.parse(await callOk(joiner.url, 'GET', '/cluster')) as { node: { takeovers: TakenOver[] } };
    const took = node.node.takeovers.find((t) => t.partition === p);
    expect(took, `the joiner's takeovers: ${JSON.stringify(node.node.takeovers)}\n${c.outputs()}`).toBeDefined();
    expect(took?.holder).toBe(first.id);
    expect(BigInt(took?.next ?? '0')).toBeGreaterThan(80n);

    const wanted = before.filter((_, s) => mine.includes(s));
    expect(await answers(joiner.url, mine)).toEqual(wanted);

    // Writes after the takeover: the joiner reads them from the position it installed.
    for (const s of mine)
      await callOk(first.url, 'POST', '/index/t/query', `Set(${s * W + 9999}, f=1)Set(${s * W + 9999}, n=7)`);
    const after = await answers(first.url, mine);
    expect(await answers(joiner.url, mine)).toEqual(after);
    expect(after).not.toEqual(wanted);
  });
});
