// kafkajs's producer steps replaced by src/kafka/kafkajs-producer-speed.ts make the same bytes:
// the CRC-32C equals kafkajs's own byte-at-a-time one (and the standard check value), and an
// encoder grown with allocUnsafe hands out exactly what was written. A real broker checks each
// batch's CRC too: the cluster tests' produces would be refused with a wrong one.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../src/storage/checksum.js';
import { kafkajs } from '../../../src/kafka/kafkajs.js';
import { seededRandom } from '../../helpers/seeded.js';

const require = createRequire(import.meta.url);
/** kafkajs's own implementation (the file its crc32C/index.js wraps, which is left alone). */
const kafkajsCrc = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (b: Buffer) => number;

interface Encoder {
  writeBuffer(b: Buffer): Encoder;
  writeInt32(v: number): Encoder;
  readonly buffer: Buffer;
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
    const EncoderClass = require('kafkajs/src/protocol/encoder.js') as new () => Encoder;
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
});
