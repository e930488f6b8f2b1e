// kafkajs's producer steps replaced by src/kafka/kafkajs-producer-speed.ts make the same bytes:
// the CRC-32C equals kafkajs's own byte-at-a-time one (and the standard check value), an
// encoder grown with allocUnsafe hands out exactly what was written, and an encoder keeping
// large buffers by reference (the rope) gives the bytes and sizes of kafkajs's own encoder, a
// fresh copy of its file, through random mixes of its writes. A real broker checks each batch's
// CRC too (test/integration/kafka-large-message.test.ts sends messages large enough for the rope).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { runInThisContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../src/storage/checksum.js';
import { kafkajs } from '../../../src/kafka/kafkajs.js';
import { ROPE_MIN_BYTES } from '../../../src/kafka/kafkajs-producer-speed.js';
import { seededRandom } from '../../helpers/seeded.js';

const require = createRequire(import.meta.url);
/** kafkajs's own implementation (the file its crc32C/index.js wraps, which is left alone). */
const kafkajsCrc = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;

interface Encoder {
  writeBuffer(b: Buffer): Encoder;
  writeInt32(v: number): Encoder;
  writeInt64(v: number): Encoder;
  writeString(v: string): Encoder;
  writeBytes(v: Buffer | string | null): Encoder;
  writeVarIntBytes(v: Buffer | null): Encoder;
  writeUVarIntBytes(v: Buffer | null): Encoder;
  writeEncoder(v: Encoder): Encoder;
  writeEncoderArray(v: Encoder[]): Encoder;
  writeArray(v: Encoder[], type?: 'object'): Encoder;
  size(): number;
  readonly buffer: Buffer;
}

type EncoderClass = new () => Encoder;

/** kafkajs's encoder as it ships: its file run again as a module of its own, untouched by the speed-ups. */
function pristineEncoder(): EncoderClass {
  const path = require.resolve('kafkajs/src/protocol/encoder.js');
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${readFileSync(path, 'utf8')}\n})`;
  const fn = runInThisContext(wrapped, { filename: path }) as (...a: unknown[]) => void;
  const module = { exports: {} as unknown };
  fn(module.exports, createRequire(path), module, path, dirname(path));
  return module.exports as EncoderClass;
}

/**
 * A random mix of kafkajs's writes (small and rope-sized buffers, nested encoders, the whole
 * read midway), replayed alike on each encoder class from the same seed; each step's size too.
 */
function randomWrites(E: EncoderClass, seed: number): { bytes: Buffer; sizes: number[] } {
  const rnd = seededRandom(seed);
  const sizes: number[] = [];
  const blob = (): Buffer => {
    const n = rnd() < 0.4 ? ROPE_MIN_BYTES + Math.floor(rnd() * 200_000) : Math.floor(rnd() * 3_000);
    return Buffer.alloc(n, Math.floor(rnd() * 256));
  };
  const fill = (e: Encoder, depth: number): Encoder => {
    const steps = 1 + Math.floor(rnd() * 6);
    for (let i = 0; i < steps; i++) {
      const k = Math.floor(rnd() * 10);
      if (k === 0) e.writeBuffer(blob());
      else if (k === 1) e.writeBytes(blob());
      else if (k === 2) e.writeVarIntBytes(blob());
      else if (k === 3) e.writeUVarIntBytes(blob());
      else if (k === 4) e.writeInt32(Math.floor(rnd() * 1e9)).writeString(`s${i}`);
      else if (k === 5) void e.buffer;
      else if (k === 6 && depth < 3) e.writeEncoder(fill(new E(), depth + 1));
      else if (k === 7 && depth < 3) e.writeEncoderArray([fill(new E(), depth + 1), fill(new E(), depth + 1)]);
      else if (k === 8 && depth < 3) e.writeArray([fill(new E(), depth + 1)], 'object');
      else e.writeInt64(i).writeBytes(null);
      sizes.push(e.size());
    }
    return e;
  };
  const top = fill(new E(), 0);
  return { bytes: Buffer.from(top.buffer), sizes };
}

describe('producer speed-ups', () => {
  it('crc32c equals kafkajs’s CRC-32C at every length and alignment', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    const rnd = seededRandom(7);
    const big = Buffer.from(Array.from({ length: 1 << 16 }, () => Math.floor(rnd() * 256)));
    for (let len = 0; len < 300; len++) {
      const at = Math.floor(rnd() * 64);
      const b = big.subarray(at, at + len);
      expect(crc32c(b)).toBe(kafkajsCrc(b));
    }
    expect(crc32c(big)).toBe(kafkajsCrc(big));
  });

  it('kafkajs’s record batches take crc32c, and its encoders give back exactly what was written', () => {
    kafkajs();
    const crcIndex = require('kafkajs/src/protocol/recordBatch/crc32C/index.js') as unknown;
    expect(crcIndex).toBe(crc32c);
    const EncoderClass = require('kafkajs/src/protocol/encoder.js') as EncoderClass;
    const rnd = seededRandom(11);
    const e = new EncoderClass();
    const want: Buffer[] = [];
    for (let i = 0; i < 40; i++) {
      // Sizes across many doublings, up to a large command's.
      const b = Buffer.alloc(Math.floor(rnd() ** 4 * 300_000), i + 1);
      e.writeBuffer(b).writeInt32(i);
      const n = Buffer.alloc(4);
      n.writeInt32BE(i);
      want.push(b, n);
    }
    expect(e.buffer.equals(Buffer.concat(want))).toBe(true);
  });

  it('an encoder keeping large buffers by reference gives kafkajs’s own bytes and sizes', () => {
    kafkajs();
    const patched = require('kafkajs/src/protocol/encoder.js') as EncoderClass;
    const pristine = pristineEncoder();
    expect(pristine).not.toBe(patched);
    let roped = 0;
    for (let seed = 1; seed <= 60; seed++) {
      const want = randomWrites(pristine, seed);
      const got = randomWrites(patched, seed);
      expect(got.sizes, `seed ${seed}`).toEqual(want.sizes);
      expect(got.bytes.equals(want.bytes), `seed ${seed}`).toBe(true);
      if (want.bytes.length >= ROPE_MIN_BYTES) roped++;
    }
    // The mixes did reach the rope (buffers of ROPE_MIN_BYTES and more).
    expect(roped).toBeGreaterThan(10);
  });

  it('a message kept by reference is not copied until the request is joined', () => {
    kafkajs();
    const E = require('kafkajs/src/protocol/encoder.js') as EncoderClass;
    const value = Buffer.alloc(ROPE_MIN_BYTES * 4, 7);
    const inner = new E().writeInt32(1).writeVarIntBytes(value);
    const outer = new E().writeInt32(2).writeEncoder(inner);
    // Before the join, the value's bytes are the caller's: a change shows through.
    value[0] = 9;
    const joined = outer.buffer;
    expect(joined.length).toBe(outer.size());
    expect(joined[4 + 4 + 3]).toBe(9);
    // Read twice (kafkajs reads a request's size, then writes it): the same bytes, joined once.
    expect(outer.buffer).toBe(joined);
  });
});
