// A hand-written decoder for the Bits message (BitsSet / BitsCleared), the bulk of any log:
// replay speed is bounded by it, and protobufjs's generic decoder (objects, Longs, per-field
// dispatch) cost more than the apply itself. Wire format per proto/log/events.proto.
import { RoaringBitmap32, type Bitmap } from '../roaring/bitmap.js';
import { AssertionError } from '../util/assert.js';
import { PayloadReader } from './payload-reader.js';
import type { BitDelta } from './bits-encode.js';
import { NameCache } from './name-cache.js';

export interface BitsPayload extends BitDelta {
  exists: boolean;
}

const r = new PayloadReader('Bits');

const NAMES = [new NameCache(), new NameCache(), new NameCache()] as const;

/**
 * Scratch bitmaps for replay: deserializing into a reused object avoids a native object (and its
 * finalizer work) per record, which dominated replay of small events. Only the first few row
 * bitmaps of an event reuse a slot, so the pool never pins the memory of a huge import.
 */
const SCRATCH_SLOTS = 64;
const scratch: Bitmap[] = [];

/**
 * `reuse`: the returned bitmaps and offset arrays may be scratch objects overwritten by the next
 * call, so the caller must consume the event before decoding another (apply() copies whatever it
 * keeps).
 */
export function decodeBitsPayload(payload: Uint8Array, reuse = false): BitsPayload {
  r.reset(payload);
  const buf = r.buf;
  const out: BitsPayload = { index: '', field: '', view: '', shard: 0, rows: [], columns: [], exists: false };
  // Sparse rows (fields 8 and 9) may come in either order: collected, then split per row.
  const counts: number[] = [];
  let nOffsets = 0;
  let offsets: Uint32Array = reuse ? scratchOffsets : new Uint32Array(0);
  const pushOffset = (v: number): void => {
    if (nOffsets === offsets.length) offsets = grow(offsets, reuse);
    offsets[nOffsets++] = v;
  };
  while (!r.done) {
    const tag = r.varint();
    const fieldNo = tag >>> 3;
    const wire = tag & 7;
    if (wire === 2) {
      const end = r.fieldEnd();
      if (fieldNo === 1) out.index = NAMES[0].get(buf, r.pos, end);
      else if (fieldNo === 2) out.field = NAMES[1].get(buf, r.pos, end);
      else if (fieldNo === 3) out.view = NAMES[2].get(buf, r.pos, end);
      else if (fieldNo === 5) for (let p = r.pos; p + 8 <= end; p += 8) out.rows.push(buf.readDoubleLE(p));
      else if (fieldNo === 6) out.columns.push(bitmapAt(out.columns.length, buf.subarray(r.pos, end), reuse));
      else if (fieldNo === 8) while (r.pos < end) counts.push(r.varint());
      else if (fieldNo === 9) while (r.pos < end) pushOffset(r.varint());
      if (r.pos > end) throw new AssertionError('Bits payload has a varint crossing its packed field');
      r.pos = end;
    } else if (wire === 0) {
      const v = r.varint();
      if (fieldNo === 4) out.shard = v;
      else if (fieldNo === 7) out.exists = v !== 0;
      else if (fieldNo === 8) counts.push(v);
      else if (fieldNo === 9) pushOffset(v);
    } else if (wire === 1 && fieldNo === 5) {
      // An unpacked double row; skip() checks the 8 bytes are there before they are read.
      const at = r.pos;
      r.skip(wire);
      out.rows.push(buf.readDoubleLE(at));
    } else r.skip(wire);
  }
  if (counts.length > 0) splitSparse(out, counts, offsets, nOffsets);
  if (reuse) scratchOffsets = offsets;
  return out;
}

/** Scratch for sparse offsets on replay (grown, never shrunk: sparse events are small). */
let scratchOffsets: Uint32Array = new Uint32Array(256);

function grow(a: Uint32Array, reuse: boolean): Uint32Array {
  const next = new Uint32Array(Math.max(16, a.length * 2));
  next.set(a);
  if (reuse) scratchOffsets = next;
  return next;
}

function splitSparse(out: BitsPayload, counts: number[], offsets: Uint32Array, n: number): void {
  if (out.columns.length > 0) throw new AssertionError('Bits payload mixes roaring and sparse rows');
  if (counts.length !== out.rows.length)
    throw new AssertionError(`Bits payload has ${counts.length} sparse counts for ${out.rows.length} rows`);
  let at = 0;
  for (const c of counts) {
    if (at + c > n) throw new AssertionError('Bits payload has fewer sparse offsets than its counts');
    out.columns.push(offsets.subarray(at, at + c));
    at += c;
  }
  if (at !== n) throw new AssertionError('Bits payload has more sparse offsets than its counts');
}

function bitmapAt(slot: number, bytes: Buffer, reuse: boolean): Bitmap {
  if (!reuse || slot >= SCRATCH_SLOTS) return RoaringBitmap32.deserialize(bytes, 'portable');
  let b = scratch[slot];
  if (b === undefined) scratch[slot] = b = new RoaringBitmap32();
  return b.deserialize(bytes, 'portable');
}
