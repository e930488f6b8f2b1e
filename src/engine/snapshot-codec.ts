// Snapshot body: the state's events (state/snapshot.ts) framed as type u8 | length u32 LE | payload.
// A fragment's rows travel in a snapshot-only record (FRAGMENT_RECORD, never in the log): the rows'
// portable roaring bytes back to back, which load by one native deserialize per row straight into
// the fragment (apply adopts them, no copy) instead of a protobuf decode, a deserialize and a
// clone per row. Bodies written before it (every fragment a BitsSet event) still load: the record
// types of both coexist and are told apart by the type byte.
import { decodeEvent, encodeEvent } from '../events/codec.js';
import type { Event } from '../events/types.js';
import { RoaringBitmap32, type Bitmap } from '../state/fragment.js';
import type { Holder } from '../state/holder.js';
import { stateEvents } from '../state/snapshot.js';
import { AssertionError } from '../util/assert.js';

/**
 * Type byte of a fragment record; far above the event type codes (events/codec.ts), which are
 * append-only and small.
 *   names: 3 × (u16 LE length | UTF-8) index, field, view | shard u32 | rows u32 |
 *   rows × row id f64 | rows × byte length u32 | rows × portable roaring bytes
 */
export const FRAGMENT_RECORD = 0xf0;

/** Encodes synchronously, so the body is the state at exactly one sequence. */
export function encodeSnapshot(holder: Holder): { chunks: Uint8Array[]; events: number; bytes: number } {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let events = 0;
  for (const e of stateEvents(holder)) {
    const { type, payload } = e.type === 'BitsSet' && e.exists !== true && allBitmaps(e.columns) ? { type: FRAGMENT_RECORD, payload: encodeFragment(e, e.columns) } : encodeEvent(e);
    const head = new Uint8Array(5);
    head[0] = type;
    new DataView(head.buffer).setUint32(1, payload.byteLength, true);
    chunks.push(head, payload);
    bytes += 5 + payload.byteLength;
    events++;
  }
  return { chunks, events, bytes };
}

export function* decodeSnapshot(body: Uint8Array): Generator<Event> {
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let pos = 0;
  while (pos < body.byteLength) {
    if (pos + 5 > body.byteLength) throw new AssertionError(`snapshot body truncated at byte ${pos}`);
    const type = body[pos];
    const len = view.getUint32(pos + 1, true);
    pos += 5;
    if (pos + len > body.byteLength) throw new AssertionError(`snapshot record at byte ${pos} overruns the body`);
    const payload = body.subarray(pos, pos + len);
    yield type === FRAGMENT_RECORD ? decodeFragment(payload) : decodeEvent(type, payload);
    pos += len;
  }
}

function allBitmaps(columns: readonly unknown[]): columns is Bitmap[] {
  return columns.every((c) => c instanceof RoaringBitmap32);
}

type FragmentEvent = Extract<Event, { type: 'BitsSet' }>;

/** One buffer per fragment: rows serialize straight into it. */
function encodeFragment(e: FragmentEvent, rows: Bitmap[]): Uint8Array {
  const names = [e.index, e.field, e.view].map((s) => Buffer.from(s, 'utf8'));
  const sizes = rows.map((b) => b.getSerializationSizeInBytes('portable'));
  let headBytes = 8;
  for (const n of names) headBytes += 2 + n.length;
  const n = rows.length;
  const total = headBytes + n * 12 + sizes.reduce((a, b) => a + b, 0);
  const out = Buffer.allocUnsafe(total);
  let p = 0;
  for (const name of names) {
    out.writeUInt16LE(name.length, p);
    name.copy(out, p + 2);
    p += 2 + name.length;
  }
  out.writeUInt32LE(e.shard, p);
  out.writeUInt32LE(n, p + 4);
  p += 8;
  for (let i = 0; i < n; i++) out.writeDoubleLE(e.rows[i], p + i * 8);
  p += n * 8;
  for (let i = 0; i < n; i++) out.writeUInt32LE(sizes[i], p + i * 4);
  p += n * 4;
  for (let i = 0; i < n; i++) {
    rows[i].serialize('portable', out.subarray(p, p + sizes[i]));
    p += sizes[i];
  }
  return out;
}

/** The fragment as a BitsSet whose freshly deserialized rows apply() may keep (`adopt`). */
function decodeFragment(payload: Uint8Array): FragmentEvent {
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  let p = 0;
  const need = (bytes: number, what: string): void => {
    if (p + bytes > buf.length) throw new AssertionError(`snapshot fragment record truncated in ${what}`);
  };
  const name = (): string => {
    need(2, 'a name');
    const len = buf.readUInt16LE(p);
    need(2 + len, 'a name');
    const s = buf.toString('utf8', p + 2, p + 2 + len);
    p += 2 + len;
    return s;
  };
  const index = name();
  const field = name();
  const view = name();
  need(8, 'the header');
  const shard = buf.readUInt32LE(p);
  const n = buf.readUInt32LE(p + 4);
  p += 8;
  need(n * 12, 'the row table');
  const rows: number[] = new Array<number>(n);
  for (let i = 0; i < n; i++) rows[i] = buf.readDoubleLE(p + i * 8);
  const sizesAt = p + n * 8;
  p = sizesAt + n * 4;
  const columns: Bitmap[] = new Array<Bitmap>(n);
  for (let i = 0; i < n; i++) {
    const size = buf.readUInt32LE(sizesAt + i * 4);
    need(size, `row ${rows[i]}`);
    columns[i] = RoaringBitmap32.deserialize(buf.subarray(p, p + size), 'portable');
    p += size;
  }
  if (p !== buf.length) throw new AssertionError(`snapshot fragment record has ${buf.length - p} trailing bytes`);
  return { type: 'BitsSet', index, field, view, shard, rows, columns, adopt: true };
}
