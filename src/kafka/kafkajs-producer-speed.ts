// Two of kafkajs's producer steps, replaced before kafkajs loads (kafkajs.ts), the bytes they make
// unchanged. A one-shard import command is ~1 MB; sending it cost ~5 ms of CPU in kafkajs (median
// of 35 warm sends, 9-10 ms wall on a loaded machine), of which:
// - the batch's CRC-32C, a byte at a time (3-4 ms): the log's own crc32c (storage/checksum.ts,
//   native for long inputs) computes it in about 0.2 ms a MB;
// - growing its encoders with Buffer.alloc (zero-filled) at every doubling, four encoders deep
//   for one record (record, batch body, batch, request): Buffer.allocUnsafe. Safe because an
//   encoder hands out only `buf.slice(0, offset)`, and every method that moves `offset` has
//   written the bytes it moves over (kafkajs/src/protocol/encoder.js).
// Both: 2.6-2.8 ms of CPU and 4.8-5.7 ms wall per send (same machine, same minute).
import type { createRequire } from 'node:module';
import { crc32c } from '../storage/checksum.js';

type Require = ReturnType<typeof createRequire>;

interface EncoderClass {
  nextPowerOfTwo(n: number): number;
  prototype: { ensureAvailable(this: EncoderInstance, length: number): void };
}

interface EncoderInstance {
  buf: Buffer;
  offset: number;
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
  Encoder.prototype.ensureAvailable = function ensureAvailable(length: number): void {
    if (this.offset + length <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Encoder.nextPowerOfTwo(this.offset + length));
    this.buf.copy(grown, 0, 0, this.offset);
    this.buf = grown;
  };
}
