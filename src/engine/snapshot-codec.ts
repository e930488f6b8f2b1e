// Snapshot body: the state's events (events/state-events.ts) framed as type u8 | length u32 LE | payload.
// A fragment's rows travel in a snapshot-only record (FRAGMENT_RECORD, never in the log): each row
// in CRoaring's frozen format at a 32-byte aligned offset of the body, so loading is a read of the
// file and one read-only view per row over its bytes (no per-row copy or allocation of containers;
// apply adopts the views, and a write copies a row first), instead of a protobuf decode, a
// deserialize and a clone per row. Bodies written before it (every fragment a BitsSet event)
// still load: the record types of both coexist and are told apart by the type byte.
// A restart decodes lazily (decodeSnapshot's `lazy`): a fragment record's names and row table
// are checked at once, its rows are adopted as frozen bytes when the fragment is first touched and
// viewed when each is first read (state/fragment.ts), so a restart costs a read of the file and a
// walk over its records, and rows nobody reads take their bytes only.
import { decodeEvent, encodeEvent } from '../events/codec.js';
import type { BitDelta, Event } from '../events/types.js';
import roaring from 'roaring';
import type { Bitmap } from '../roaring/bitmap.js';
import { FROZEN_ALIGN, FROZEN_FORMAT, FrozenRow, frozenPad } from '../roaring/frozen.js';
import type { ReadonlyHolder } from '../state/readonly.js';
import { type FragmentState, stateEvents } from '../events/state-events.js';
import { AssertionError } from '../util/assert.js';

/**
 * Type byte of a fragment record; far above the event type codes (events/codec.ts), which are
 * append-only and small.
 *   names: 3 × (u16 LE length | UTF-8) index, field, view | shard f64 | rows u32 |
 *   rows × row id f64 | rows × byte length u32 | per row: zero padding to a body offset that is
 *   a multiple of 32, then the row in CRoaring's frozen format (little-endian, as is every
 *   platform Node runs on)
 * The body's CRC32C (storage/snapshot-store.ts) is checked before any view is made: frozen
 * views trust their bytes.
 */
export const FRAGMENT_RECORD = 0xf0;
const FROZEN = FROZEN_FORMAT;
const ALIGN = FROZEN_ALIGN;
const padTo = frozenPad;

/** Encodes synchronously, so the body is the state at exactly one sequence. */
export function encodeSnapshot(holder: ReadonlyHolder): { chunks: Uint8Array[]; events: number; bytes: number } {
  const captured = captureSnapshot(holder);
  const chunks = [...captured.chunks];
  let bytes = 0;
  for (const c of chunks) bytes += c.byteLength;
  return { chunks, events: captured.events, bytes };
}

/**
 * A row as captured: a frozen row itself (never changed in place), or bytes in frozen layout (a
 * packed row's own, a mutable row's serialized now).
 */
type CapturedRow = Bitmap | Uint8Array;
type FragmentHead = Omit<BitDelta, 'columns'>;
type Captured = { record: { type: number; payload: Uint8Array } } | { fragment: FragmentHead; rows: CapturedRow[] };

/**
 * The state at this moment, encoded as the chunks are pulled. Capturing is synchronous and cheap
 * where rows are frozen (a snapshot's or an import's: a write replaces such a row with a copy,
 * so the captured one stays as it was); a mutable row is serialized now. The writer then encodes
 * one record per pull between its awaited writes, so a snapshot of frozen rows does not hold the
 * event loop for the whole body.
 */
export function captureSnapshot(
  holder: ReadonlyHolder,
  /** A part of the state only (a cluster partition's shards): what to keep of the whole. */
  keep?: (e: Event | FragmentState) => boolean,
): { events: number; chunks: Iterable<Uint8Array> } {
  const captured: Captured[] = [];
  for (const e of stateEvents(holder)) {
    if (keep !== undefined && !keep(e)) continue;
    if (e.type !== 'Fragment') {
      captured.push({ record: encodeEvent(e) });
      continue;
    }
    const { index, field, view, fragment } = e;
    const rows = fragment.rowIds();
    const bytes = rows.map((r): CapturedRow => {
      const b = fragment.captureRow(r)!;
      return b instanceof Uint8Array || b.isFrozen ? b : b.serialize(FROZEN);
    });
    captured.push({ fragment: { index, field, view, shard: fragment.shard, rows }, rows: bytes });
  }
  return { events: captured.length, chunks: encodeCaptured(captured) };
}

function* encodeCaptured(captured: Captured[]): Generator<Uint8Array> {
  let bytes = 0;
  for (const c of captured) {
    const { type, payload } =
      'record' in c ? c.record : { type: FRAGMENT_RECORD, payload: encodeFragment(c.fragment, c.rows, bytes + 5) };
    const head = new Uint8Array(5);
    head[0] = type;
    new DataView(head.buffer).setUint32(1, payload.byteLength, true);
    bytes += 5 + payload.byteLength;
    yield head;
    yield payload;
  }
}

/** `lazy`: fragment records become deferred BitsSet events (rows decoded on first touch). */
export function* decodeSnapshot(bytes: Uint8Array, opts: { lazy?: boolean } = {}): Generator<Event> {
  // Row offsets are aligned relative to the body: the body itself must start aligned (a copy
  // only if the file's buffer does not).
  const aligned = roaring.ensureBufferAligned(bytes, ALIGN);
  const body = Buffer.from(aligned.buffer, aligned.byteOffset, aligned.byteLength);
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  let pos = 0;
  while (pos < body.byteLength) {
    if (pos + 5 > body.byteLength) throw new AssertionError(`snapshot body truncated at byte ${pos}`);
    const type = body[pos];
    const len = view.getUint32(pos + 1, true);
    pos += 5;
    if (pos + len > body.byteLength) throw new AssertionError(`snapshot record at byte ${pos} overruns the body`);
    yield decodeRecord(type, body, pos, len, opts.lazy === true);
    pos += len;
  }
}

/** One record of a body: a fragment's rows (read in place in `buf`), or any other event. */
function decodeRecord(type: number, buf: Buffer, at: number, len: number, lazy: boolean): Event {
  return type === FRAGMENT_RECORD ? decodeFragment(buf, at, len, lazy) : decodeEvent(type, buf.subarray(at, at + len));
}

/**
 * decodeSnapshot (eager) over a body that arrives in pieces (a cluster takeover's stream): each
 * record's bytes are copied once, as they arrive, into a buffer of the record's own, placed so
 * that its rows keep the body's 32-byte alignment. The whole body is never held twice (the pieces,
 * then one joined copy, then an aligned copy of that), and records are decoded while the rest
 * is still on its way.
 */
export class SnapshotStreamDecoder {
  private readonly head = Buffer.alloc(5);
  private headFill = 0;
  /** The record being filled: its type, its buffer, where its payload starts and how much is in. */
  private record: { type: number; buf: Buffer; at: number; len: number; fill: number } | undefined;
  /** Body offset of the next byte. */
  private offset = 0;

  /** The records completed by this piece, decoded. */
  push(piece: Uint8Array): Event[] {
    const out: Event[] = [];
    let p = 0;
    while (p < piece.byteLength) {
      const r = this.record;
      if (r === undefined) {
        const n = Math.min(5 - this.headFill, piece.byteLength - p);
        this.head.set(piece.subarray(p, p + n), this.headFill);
        this.headFill += n;
        p += n;
        if (this.headFill === 5) this.begin();
      } else {
        const n = Math.min(r.len - r.fill, piece.byteLength - p);
        r.buf.set(piece.subarray(p, p + n), r.at + r.fill);
        r.fill += n;
        p += n;
      }
      const done = this.record;
      if (done !== undefined && done.fill === done.len) {
        this.record = undefined;
        out.push(decodeRecord(done.type, done.buf, done.at, done.len, false));
      }
    }
    return out;
  }

  /** Throws when the body ended inside a record. */
  end(): void {
    if (this.headFill > 0 || this.record !== undefined)
      throw new AssertionError(`snapshot body truncated at byte ${this.offset + this.headFill}`);
  }

  private begin(): void {
    const type = this.head[0];
    const len = this.head.readUInt32LE(1);
    this.headFill = 0;
    this.offset += 5;
    // The payload's offset in a buffer of its own keeps its offset in the body modulo ALIGN.
    const at = this.offset % ALIGN;
    const aligned = roaring.bufferAlignedAllocUnsafe(at + len, ALIGN);
    const buf = Buffer.from(aligned.buffer, aligned.byteOffset, aligned.byteLength);
    this.record = { type, buf, at, len, fill: 0 };
    this.offset += len;
  }
}

type FragmentEvent = Extract<Event, { type: 'BitsSet' }>;

/**
 * One buffer per fragment, which starts at body offset `at`: rows serialize straight into it (or
 * are copied in, when captured as bytes: the frozen layout is relative to its aligned start).
 */
function encodeFragment(e: FragmentHead, rows: CapturedRow[], at: number): Uint8Array {
  const names = [e.index, e.field, e.view].map((s) => Buffer.from(s, 'utf8'));
  const sizes = rows.map((b) => (b instanceof Uint8Array ? b.byteLength : b.getSerializationSizeInBytes(FROZEN)));
  const n = rows.length;
  let total = 12 + n * 12;
  for (const name of names) total += 2 + name.length;
  for (const size of sizes) total += padTo(at + total) + size;
  const out = Buffer.alloc(total); // zeroed: the padding is part of the checksummed body
  let p = 0;
  for (const name of names) {
    out.writeUInt16LE(name.length, p);
    name.copy(out, p + 2);
    p += 2 + name.length;
  }
  // Shards go up to 2^44 − 1 (64-bit column IDs): a double holds them exactly, as it does row IDs.
  out.writeDoubleLE(e.shard, p);
  out.writeUInt32LE(n, p + 8);
  p += 12;
  for (let i = 0; i < n; i++) out.writeDoubleLE(e.rows[i], p + i * 8);
  p += n * 8;
  for (let i = 0; i < n; i++) out.writeUInt32LE(sizes[i], p + i * 4);
  p += n * 4;
  for (let i = 0; i < n; i++) {
    p += padTo(at + p);
    const row = rows[i];
    if (row instanceof Uint8Array) out.set(row, p);
    else row.serialize(FROZEN, out.subarray(p, p + sizes[i]));
    p += sizes[i];
  }
  return out;
}

/**
 * The fragment record at body[at, at + len) as a BitsSet whose rows are frozen views into the
 * body, for apply() to keep (`adopt`); the views keep the body alive. Lazy: the layout is checked
 * now, and the event's `deferred` gives the rows as frozen bytes in the body, which the fragment
 * views when each row is first read (state/fragment.ts).
 */
function decodeFragment(body: Buffer, at: number, len: number, lazy: boolean): FragmentEvent {
  const end = at + len;
  let p = at;
  const need = (bytes: number, what: string): void => {
    if (p + bytes > end) throw new AssertionError(`snapshot fragment record truncated in ${what}`);
  };
  const name = (): string => {
    need(2, 'a name');
    const n = body.readUInt16LE(p);
    need(2 + n, 'a name');
    const s = body.toString('utf8', p + 2, p + 2 + n);
    p += 2 + n;
    return s;
  };
  const index = name();
  const field = name();
  const view = name();
  need(12, 'the header');
  const shard = body.readDoubleLE(p);
  if (!Number.isSafeInteger(shard) || shard < 0)
    throw new AssertionError(`snapshot fragment record has shard ${shard}`);
  const n = body.readUInt32LE(p + 8);
  p += 12;
  need(n * 12, 'the row table');
  const rows: number[] = new Array<number>(n);
  for (let i = 0; i < n; i++) rows[i] = body.readDoubleLE(p + i * 8);
  const sizesAt = p + n * 8;
  p = sizesAt + n * 4;
  const rowsAt = p;
  for (let i = 0; i < n; i++) {
    p += padTo(p);
    need(body.readUInt32LE(sizesAt + i * 4), `row ${rows[i]}`);
    p += body.readUInt32LE(sizesAt + i * 4);
  }
  if (p !== end) throw new AssertionError(`snapshot fragment record has ${end - p} trailing bytes`);
  const frozen = (): FrozenRow[] => {
    const out = new Array<FrozenRow>(n);
    let q = rowsAt;
    for (let i = 0; i < n; i++) {
      const size = body.readUInt32LE(sizesAt + i * 4);
      q += padTo(q);
      out[i] = new FrozenRow(body, q, size, -1);
      q += size;
    }
    return out;
  };
  const event = { type: 'BitsSet', index, field, view, shard, adopt: true } as const;
  if (!lazy) return { ...event, rows, columns: frozen().map((r) => r.view()) };
  return { ...event, rows: [], columns: [], deferred: () => ({ rows, frozen: frozen() }) };
}
