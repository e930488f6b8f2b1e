// The byte budget of an answer in cluster mode (issue 23): a read merged at the coordinator is
// refused with a 400 naming --max-result-bytes and the merged answer's size, at whichever node it
// is asked, even when every holder's own part is below the bound; a large answer under the bound
// is written in slices (chunked, no Content-Length) and arrives whole. Three real nodes on the
// run's broker, 8 partitions, R=1.
import { describe, expect, it } from 'vitest';
import { encodeImportRoaringRequest } from '../../src/encoding/public-proto.js';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { encodePilosaRoaring } from '../../src/roaring/pilosa-roaring.js';
import { call, callOk, clusterForFile } from '../helpers/cluster.js';

const SHARD = 1 << 20;
const SHARDS = 8;
const PER_SHARD = 65_536;
// Row(g=1) over shards 0..7 is 524,288 columns of 8 bytes (7 digits and a comma): 4,194,304
// bytes, over this bound; any one holder's part (at most 7 shards: 3,670,016) is under it.
const BOUND = 4_000_000;
const PB = { 'content-type': 'application/x-protobuf' };

let loading: Promise<void> | undefined;

/** Row 1 of field g holds columns 0..PER_SHARD-1 of shards 0..SHARDS-1 (imported once per file). */
function loaded(url: string): Promise<void> {
  loading ??= (async () => {
    await callOk(url, 'POST', '/index/i', '{}');
    await callOk(url, 'POST', '/index/i/field/g', '{}');
    const cols = new RoaringBitmap32();
    cols.addRange(0, PER_SHARD);
    const body = encodeImportRoaringRequest({
      clear: false,
      views: [{ name: '', data: encodePilosaRoaring(new Map([[1, cols]])) }],
    });
    for (let s = 0; s < SHARDS; s++) await callOk(url, 'POST', `/index/i/field/g/import-roaring/${s}`, body, PB);
  })();
  return loading;
}

describe('cluster: the byte budget of a merged answer', () => {
  const cluster = clusterForFile({ nodes: 3, partitions: 8, extraArgs: ['--max-result-bytes', String(BOUND)] });

  it('refuses a merged answer past the bound at every node, naming the bound and the size', {
    timeout: 120_000,
  }, async () => {
    const c = cluster();
    await loaded(c.nodes[0].url);
    for (const node of c.nodes) {
      const count = JSON.parse(await callOk(node.url, 'POST', '/index/i/query', 'Count(Row(g=1))')) as {
        results: number[];
      };
      expect(count.results).toEqual([SHARDS * PER_SHARD]);
      const a = await call(node.url, 'POST', '/index/i/query', 'Row(g=1)');
      expect(a.status, a.body.slice(0, 300)).toBe(400);
      const error = (JSON.parse(a.body) as { error: string }).error;
      expect(error).toContain('max-result-bytes');
      // The size is counted where the refusal is made: the coordinator over the members' parts,
      // or one member holding every asked partition, whose count adds the row's few fixed bytes.
      const size = Number(/\((\d+) bytes/.exec(error)?.[1]);
      expect(size).toBeGreaterThanOrEqual(SHARDS * PER_SHARD * 8);
      expect(size).toBeLessThanOrEqual(SHARDS * PER_SHARD * 8 + 16);
      expect(error).toContain('3.8 MiB');
    }
  });

  it('writes a large merged answer under the bound in slices, whole', { timeout: 60_000 }, async () => {
    const c = cluster();
    await loaded(c.nodes[2].url);
    // Half the shards: 2,097,152 bytes, under the bound and over the 1 MiB where slicing starts.
    const r = await fetch(`${c.nodes[1].url}/index/i/query?shards=0,1,2,3`, {
      method: 'POST',
      body: 'Row(g=1)',
      signal: AbortSignal.timeout(30_000),
    });
    const text = await r.text();
    expect(r.status, text.slice(0, 300)).toBe(200);
    expect(r.headers.get('transfer-encoding')).toBe('chunked');
    expect(r.headers.get('content-length')).toBeNull();
    const columns = (JSON.parse(text) as { results: { columns: number[] }[] }).results[0].columns;
    const want: number[] = [];
    for (let s = 0; s < 4; s++) for (let k = 0; k < PER_SHARD; k++) want.push(s * SHARD + k);
    expect(columns).toEqual(want);
  });
});
