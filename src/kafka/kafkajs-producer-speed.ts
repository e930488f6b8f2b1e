// Three of kafkajs's producer steps, replaced before kafkajs loads (kafkajs.ts), the bytes they
// make unchanged. A one-shard import command is ~1 MB; sending it cost ~5 ms of CPU in kafkajs
// (median of 35 warm sends, 9-10 ms wall on a loaded machine), of which:
// - the batch's CRC-32C, a byte at a time (3-4 ms): the log's own crc32c (storage/checksum.ts,
//   native for long inputs) computes it in about 0.2 ms a MB;
// - growing its encoders with Buffer.alloc (zero-filled) at every doubling: Buffer.allocUnsafe.
//   Safe because an encoder hands out only what it has written (`buf` up to `offset`), and
//   every method that moves `offset` has written the bytes it moves over
//   (kafkajs/src/protocol/encoder.js);
// - copying the message into each of the nine encoders nested around it (record, batch body,
//   batch, …, request), each grown to the next power of two: 9 copies and ~19 MB allocated for a
//   1 MB message, and the collections those allocations set off (1.7-2.8 ms of GC a send). An
//   encoder now keeps a buffer of ROPE_MIN_BYTES or more by reference, after the bytes written
//   before it (a rope), and `buffer` joins the pieces once; an encoder written into another
//   passes its pieces on. Left: three copies of the message (the batch CRC's input, the batch
//   kafkajs writes as bytes, the request given to the socket), each sized exactly.
// The first two: 2.6-2.8 ms of CPU and 4.8-5.7 ms wall per send (same machine, same minute).
import type { createRequire } from 'node:module';
import { crc32c } from '../storage/checksum.js';

type Require = ReturnType<typeof createRequire>;

/** Written buffers this long or longer are kept by reference, not copied (smaller ones cost less to copy). */
export const ROPE_MIN_BYTES = 64 * 1024;
/** The fresh buffer an encoder writes on after a piece kept by reference (kafkajs starts at 512). */
const FRESH_BYTES = 512;

interface EncoderClass {
  nextPowerOfTwo(n: number): number;
  prototype: EncoderInstance;
}

interface EncoderInstance {
  buf: Buffer;
  offset: number;
  /** The rope: the bytes before `buf`, in order (written pieces and buffers kept by reference). */
  parts?: Buffer[];
  /** Their total length. */
  partsBytes?: number;
  readonly buffer: Buffer;
  ensureAvailable(this: EncoderInstance, length: number): void;
  writeBufferInternal(this: EncoderInstance, b: Buffer): void;
  writeInt32(this: EncoderInstance, v: number): EncoderInstance;
  writeBytes(this: EncoderInstance, v: unknown): EncoderInstance;
  writeEncoder(this: EncoderInstance, v: EncoderInstance): EncoderInstance;
  writeEncoderArray(this: EncoderInstance, v: EncoderInstance[]): EncoderInstance;
  size(this: EncoderInstance): number;
}

export function speedUpProducer(require: Require): void {
  // The record batch takes its CRC function when it loads: too late once it has.
  const batchPath = require.resolve('kafkajs/src/protocol/recordBatch/v0/index.js');
  const crcPath = require.resolve('kafkajs/src/protocol/recordBatch/crc32C/index.js');
  if (require.cache[batchPath] === undefined) {
    require(crcPath);
    const entry = require.cache[crcPath];
    // kafkajs passes the buffer alone: the CRC from its start, unsigned, as its own returns.
    if (entry !== undefined) entry.exports = crc32c;
  }
  const Encoder = require('kafkajs/src/protocol/encoder.js') as EncoderClass;
  const proto = Encoder.prototype;
  if (Object.hasOwn(proto, ROPE)) return;
  Object.defineProperty(proto, ROPE, { value: true });
  proto.ensureAvailable = function ensureAvailable(length: number): void {
    if (this.offset + length <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Encoder.nextPowerOfTwo(this.offset + length));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };
  ropeEncoder(proto);
}

const ROPE = Symbol.for('bitledger.kafkajs.encoderRope');

/** The rope (see the top of the file): kafkajs's methods that copy a buffer in, and the two that read the whole. */
function ropeEncoder(proto: EncoderInstance): void {
  const copyIn = proto.writeBufferInternal;
  const writeBytes = proto.writeBytes;
  proto.writeBufferInternal = function writeBufferInternal(b: Buffer): void {
    if (b.length < ROPE_MIN_BYTES) copyIn.call(this, b);
    else keep(this, b);
  };
  // kafkajs reserves room for the whole buffer before it writes one: not for one kept by reference.
  proto.writeBytes = function writeBytesKept(v: unknown): EncoderInstance {
    if (!Buffer.isBuffer(v) || v.length < ROPE_MIN_BYTES) return writeBytes.call(this, v);
    this.writeInt32(v.length);
    keep(this, v);
    return this;
  };
  proto.writeEncoder = function writeEncoder(v: EncoderInstance): EncoderInstance {
    if (v === null || v === undefined || !Buffer.isBuffer(v.buf))
      throw new Error('value should be an instance of Encoder');
    passOn(this, v);
    return this;
  };
  proto.writeEncoderArray = function writeEncoderArray(vs: EncoderInstance[]): EncoderInstance {
    if (!Array.isArray(vs) || vs.some((v) => v === null || v === undefined || !Buffer.isBuffer(v.buf)))
      throw new Error('all values should be an instance of Encoder[]');
    for (const v of vs) passOn(this, v);
    return this;
  };
  proto.size = function size(): number {
    return (this.partsBytes ?? 0) + this.offset;
  };
  Object.defineProperty(proto, 'buffer', {
    configurable: true,
    get(this: EncoderInstance): Buffer {
      const parts = this.parts;
      if (parts === undefined) return this.buf.subarray(0, this.offset);
      if (this.offset === 0 && parts.length === 1) return parts[0];
      // Joined once; later reads (kafkajs reads a request's twice) take the joined piece.
      const all = Buffer.concat([...parts, this.buf.subarray(0, this.offset)], this.size());
      this.parts = [all];
      this.partsBytes = all.length;
      // A fresh one: another encoder may hold the old one's written bytes by reference.
      this.buf = Buffer.allocUnsafe(FRESH_BYTES);
      this.offset = 0;
      return all;
    },
  });
}

/** Ends the written stretch of `e` as a piece, then keeps `b` after it by reference. */
function keep(e: EncoderInstance, b: Buffer): void {
  const parts = (e.parts ??= []);
  if (e.offset > 0) {
    parts.push(e.buf.subarray(0, e.offset));
    e.partsBytes = (e.partsBytes ?? 0) + e.offset;
    e.buf = Buffer.allocUnsafe(FRESH_BYTES);
    e.offset = 0;
  }
  parts.push(b);
  e.partsBytes = (e.partsBytes ?? 0) + b.length;
}

/** Writes encoder `v`'s bytes into `e`: its pieces in order (large ones by reference), then its written stretch. */
function passOn(e: EncoderInstance, v: EncoderInstance): void {
  for (const p of v.parts ?? []) e.writeBufferInternal(p);
  e.writeBufferInternal(v.buf.subarray(0, v.offset));
}
