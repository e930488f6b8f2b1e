// A cluster Row() answer of 1.3M columns over shards held by all three members (issue 23): the
// members send their partials in binary (executor/partial-frames.ts) and the coordinator merges
// them as each shard's offsets. The answer must be byte for byte a single node's, at every node,
// and the coordinator must answer /status while the query is in flight (sent, answer not yet
// ended): ordering, not timing. Three real nodes on the run's broker, 8 partitions, R=1.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeImportRoaringRequest } from '../../src/encoding/public-proto.js';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { type ReferenceServer, callOk, clusterForFile, parseClusterMap, startReference } from '../helpers/cluster.js';
import { referencePartitionOf } from '../helpers/partition-ref.js';

const SHARDS = 8;
const PB = { 'content-type': 'application/x-protobuf' };
/** Row 1 of g in shard s: 1,024 runs of 160 columns, their starts shifted by s (163,840 a shard). */
function shardBody(s: number): Uint8Array {
  const cols = new RoaringBitmap32();
  for (let k = 0; k < 1024; k++) {
    const from = k * 1024 + ((k * 7 + s) % 97);
    cols.addRange(from, from + 160);
  }
  return encodeImportRoaringRequest({
    clear: false,
    views: [{ name: '', data: encodePilosaRoaring(new Map([[1, cols]])) }],
  });
}

async function load(url: string): Promise<void> {
  await callOk(url, 'POST', '/index/i', '{}');
  await callOk(url, 'POST', '/index/i/field/g', '{}');
  for (let s = 0; s < SHARDS; s++) await callOk(url, 'POST', `/index/i/field/g/import-roaring/${s}`, shardBody(s), PB);
}

describe('cluster: a Row() answer of 1.3M columns from three members', () => {
  const cluster = clusterForFile({ nodes: 3, partitions: 8 });
  let reference: ReferenceServer | undefined;
  let want = '';

  beforeAll(async () => {
    reference = await startReference();
    await load(reference.url);
    want = await callOk(reference.url, 'POST', '/index/i/query', 'Row(g=1)');
    await load(cluster().nodes[0].url);
  }, 180_000);

  afterAll(async () => {
    await reference?.stop();
  });

  it('equals the single node, byte for byte, at every node; the shards are spread over the members', {
    timeout: 180_000,
  }, async () => {
    const c = cluster();
    const map = parseClusterMap(await callOk(c.nodes[0].url, 'GET', '/cluster'));
    if (map === undefined) throw new Error('no partition map');
    const holders = new Set<string>();
    for (let s = 0; s < SHARDS; s++) holders.add(map.holders[referencePartitionOf('i', s, 8)][0]);
    expect(holders.size).toBe(3);
    const cols = (JSON.parse(want) as { results: { columns: number[] }[] }).results[0].columns;
    expect(cols.length).toBe(SHARDS * 163_840);
    for (const node of c.nodes) {
      const got = await callOk(node.url, 'POST', '/index/i/query', 'Row(g=1)');
      expect(got.length).toBe(want.length);
      expect(got === want).toBe(true);
    }
  });

  it('the coordinator answers /status while the query is in flight', { timeout: 120_000 }, async () => {
    const url = cluster().nodes[1].url;
    let ended = false;
    let body = '';
    const answer = new Promise<number>((resolve, reject) => {
      const req = request(`${url}/index/i/query`, { method: 'POST', agent: false }, (res) => {
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => {
          ended = true;
          resolve(res.statusCode ?? 0);
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end('Row(g=1)');
    });
    // Ordering: this /status is sent after the query and answered before the answer has ended.
    const status = await fetch(`${url}/status`);
    expect(status.status).toBe(200);
    expect(ended).toBe(false);
    expect(await answer).toBe(200);
    expect(body === want).toBe(true);
  });
});
