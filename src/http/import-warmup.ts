// The import path compiled before the first client import. A process's first two imports of a
// large body took 3-4× their later time (a 1 MB body: 40-50 ms of decode and bucketing against
// 10-20, CPU profiles of the cluster bench's cold round): V8 runs the decode, bucketing and
// encoding loops interpreted, then waits for their optimized code. The server (launchServer) and
// a cluster node's import prepare thread run this once as they start, on a synthetic import that
// touches nothing, so that a client's first imports after a start run at the speed of later ones.
// The same in single-node and cluster mode, so the cold figures of `npm run bench -- cluster`
// compare like with like.
import { defaultFieldOptions } from '../domain/types.js';
import { encodeImportRequest } from '../encoding/import-request-encode.js';
import { decodeImportRequest } from '../encoding/import-request.js';
import { decodeEvent } from '../events/codec.js';
import { buildBitsEvents } from '../service/import/prepare-bits.js';
import type { Steps } from '../util/steps.js';

/** Bits of the synthetic import: rows 1-3 over this many columns of one shard. */
const WARM_BITS = 60_000;
/** Rounds over it: the optimized code is in place after two or three. */
const WARM_ROUNDS = 4;

const INDEX = { name: 'warm-up', options: { keys: false, trackExistence: true } };
const FIELD = { name: 'warm-up', options: defaultFieldOptions('set') };

/**
 * Decodes, validates, buckets and encodes a synthetic import WARM_ROUNDS times, and decodes its
 * events' records; answers how many bits the events held in all (WARM_BITS a round).
 */
export function* warmImportPath(): Steps<number> {
  const rowIds: number[] = [];
  const columnIds: number[] = [];
  for (let k = 0; k < WARM_BITS; k++) {
    rowIds.push(1 + (k % 3));
    // Spread over the shard, out of order: the bucketing sorts as it would a client's.
    columnIds.push((k * 7919) % (1 << 20));
  }
  const body = encodeImportRequest({ index: INDEX.name, field: FIELD.name, shard: 0, rowIds, columnIds });
  let bits = 0;
  for (let i = 0; i < WARM_ROUNDS; i++) {
    const wide = { ...decodeImportRequest(body), clear: false };
    // With and without existence: both kinds of BitsSet record.
    const events = yield* buildBitsEvents(INDEX, FIELD, wide, i % 2 === 0);
    for (const e of events) {
      const back = decodeEvent(e.record.type, e.record.payload);
      if (back.type === 'BitsSet') for (const c of back.columns) bits += c instanceof Uint32Array ? c.length : c.size;
    }
    yield;
  }
  return bits;
}
