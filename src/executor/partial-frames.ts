// The binary form of a holder's partials (version 1), for cluster reads of big row answers. A
// 10M-column partial as JSON cost the holder one JSON.stringify and the coordinator one
// JSON.parse of about 80 MB, each a synchronous step of hundreds of ms (issue 23's cluster
// bench). Here the columns travel as each shard's offsets (little-endian u32), written a piece
// at a time and read into one Uint32Array per shard as the bytes arrive: no step grows with
// the answer.
//
// Layout: "BLP1", u32 header length, the header (JSON: { partials: FramePartial[] }), then for
// each partial of kind 'shards' in order, `count` times: f64 shard, u32 n, n × u32 offsets.
// Every other partial (small, bounded by --max-result-rows) stays in the header as JSON.
import { endianness } from 'node:os';
import { MAX_SAFE_SHARD } from '../domain/shard.js';
import type { CallPartial } from './partial.js';
import type { RowColumns } from './result.js';
import { type WirePartial, WireError, decodePartial, encodePartial } from './partial-wire.js';
import { ShardColumns, type ShardOffsets } from './shard-columns.js';

/** The content type of an answer in this form; the request field that asks for it. */
export const FRAMES_TYPE = 'application/vnd.bitledger.partials.v1';
export const FRAMES_ANSWER = 'frames/1';

type FramePartial = WirePartial | { kind: 'shards'; count: number };

const MAGIC = 0x31504c42; // "BLP1" read as a little-endian u32
/** Offsets per written piece (256 KiB). */
const PIECE = 65_536;
const LE = endianness() === 'LE';

/** The answer's bytes, a bounded piece at a time (views over the offsets where the host is LE). */
export function* encodeFrames(partials: readonly CallPartial[]): Generator<Uint8Array, void, undefined> {
  const header: FramePartial[] = partials.map((p) =>
    p.kind === 'columns' && p.columns instanceof ShardColumns
      ? { kind: 'shards', count: p.columns.parts.length }
      : encodePartial(p),
  );
  const text = Buffer.from(JSON.stringify({ partials: header }), 'utf8');
  const head = Buffer.alloc(8);
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(text.length, 4);
  yield head;
  yield text;
  for (const p of partials) {
    if (p.kind !== 'columns' || !(p.columns instanceof ShardColumns)) continue;
    for (const { shard, offsets } of p.columns.parts) {
      const h = Buffer.alloc(12);
      h.writeDoubleLE(shard, 0);
      h.writeUInt32LE(offsets.length, 8);
      yield h;
      for (let at = 0; at < offsets.length; at += PIECE) yield leBytes(offsets.subarray(at, at + PIECE));
    }
  }
}

function leBytes(a: Uint32Array): Uint8Array {
  if (LE) return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const out = Buffer.alloc(a.byteLength);
  for (let i = 0; i < a.length; i++) out.writeUInt32LE(a[i], i * 4);
  return out;
}

/**
 * Reads an answer in this form as its chunks arrive (push, then end): each chunk is copied into
 * place, so a step is as long as one chunk. A malformed or cut answer is a WireError.
 */
export class FramesReader {
  private fixed = Buffer.alloc(0);
  private need = 8;
  private stage: 'head' | 'header' | 'shard' | 'offsets' | 'done' = 'head';
  private header: FramePartial[] = [];
  /** The 'shards' partials still to read: index into header, parts left. */
  private queue: { at: number; left: number; parts: ShardOffsets[] }[] = [];
  private target: { bytes: Uint8Array; filled: number; part: ShardOffsets } | undefined;
  private readonly shards = new Map<number, ShardOffsets[]>();

  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.stage === 'done') throw new WireError('cluster partial: bytes past the end of the answer');
      if (this.stage === 'offsets' && this.target !== undefined) {
        const t = this.target;
        const n = Math.min(chunk.length - at, t.bytes.length - t.filled);
        t.bytes.set(chunk.subarray(at, at + n), t.filled);
        t.filled += n;
        at += n;
        if (t.filled === t.bytes.length) this.partDone();
        continue;
      }
      const n = Math.min(chunk.length - at, this.need - this.fixed.length);
      this.fixed = Buffer.concat([this.fixed, chunk.subarray(at, at + n)]);
      at += n;
      if (this.fixed.length === this.need) this.fixedDone();
    }
  }

  /** The partials, once every byte has arrived. */
  end(): CallPartial[] {
    if (this.stage !== 'done') throw new WireError('cluster partial: the answer was cut short');
    return this.header.map((p, i) => {
      if (p.kind !== 'shards') return decodePartial(p);
      return { kind: 'columns', columns: columnsOf(this.shards.get(i) ?? []) };
    });
  }

  private fixedDone(): void {
    const b = this.fixed;
    this.fixed = Buffer.alloc(0);
    if (this.stage === 'head') {
      if (b.readUInt32LE(0) !== MAGIC) throw new WireError('cluster partial: not a version 1 binary answer');
      this.stage = 'header';
      this.need = b.readUInt32LE(4);
      if (this.need === 0) throw new WireError('cluster partial: empty header');
    } else if (this.stage === 'header') this.readHeader(b);
    else this.startPart(b.readDoubleLE(0), b.readUInt32LE(8));
  }

  private readHeader(b: Buffer): void {
    const v = JSON.parse(b.toString('utf8')) as { partials?: unknown };
    if (!Array.isArray(v.partials)) throw new WireError('cluster partial: header without partials');
    this.header = v.partials as FramePartial[];
    this.header.forEach((p, at) => {
      if (p.kind !== 'shards') return;
      if (!Number.isSafeInteger(p.count) || p.count < 0) throw new WireError('cluster partial: bad shard count');
      this.queue.push({ at, left: p.count, parts: [] });
    });
    this.nextPart();
  }

  private startPart(shard: number, n: number): void {
    if (!Number.isSafeInteger(shard) || shard < 0) throw new WireError('cluster partial: bad shard');
    const part: ShardOffsets = { shard, offsets: new Uint32Array(n) };
    this.target = { bytes: new Uint8Array(part.offsets.buffer), filled: 0, part };
    this.stage = 'offsets';
    if (n === 0) this.partDone();
  }

  private partDone(): void {
    const t = this.target;
    const q = this.queue[0];
    if (t === undefined || q === undefined) throw new WireError('cluster partial: offsets without a shard');
    if (!LE) {
      const dv = new DataView(t.bytes.buffer);
      for (let i = 0; i < t.part.offsets.length; i++) t.part.offsets[i] = dv.getUint32(i * 4, true);
    }
    q.parts.push(t.part);
    q.left--;
    this.target = undefined;
    this.nextPart();
  }

  private nextPart(): void {
    while (this.queue.length > 0 && this.queue[0].left === 0) {
      const q = this.queue.shift();
      if (q !== undefined) this.shards.set(q.at, q.parts);
    }
    if (this.queue.length === 0) this.stage = 'done';
    else {
      this.stage = 'shard';
      this.need = 12;
    }
  }
}

/** A holder's shards as columns: ShardColumns, or an array where a shard is past 2^53 / 2^20. */
function columnsOf(parts: ShardOffsets[]): RowColumns {
  for (let i = 1; i < parts.length; i++)
    if (parts[i].shard <= parts[i - 1].shard) throw new WireError('cluster partial: shards out of order');
  if (parts.some((p) => p.shard > MAX_SAFE_SHARD)) throw new WireError('cluster partial: a shard past 2^53 columns');
  return new ShardColumns(parts);
}
