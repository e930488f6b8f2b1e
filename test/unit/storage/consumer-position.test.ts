// The consumer position record (src/storage/consumer-position.ts): each kind round-trips; the
// forms written before it (JSON, cluster text) are read; a flipped bit, a newer version, a
// position of another kind and garbage are refused with PositionCorruptError, never guessed.
import { describe, expect, it } from 'vitest';
import {
  POSITION_FORMAT_VERSION,
  type ConsumerPosition,
  decodeConsumerPosition,
  encodeConsumerPosition,
} from '../../../src/storage/consumer-position.js';
import { crc32c } from '../../../src/storage/checksum.js';
import { PositionCorruptError } from '../../../src/storage/errors.js';

const samples: ConsumerPosition[] = [
  { kind: 'mirror', topic: 'bitledger-log', seq: 2 ** 40 },
  { kind: 'replica', topic: 'primary', offset: '9007199254740993', seq: 17 },
  { kind: 'cluster', next: 120n, appliedAfter: [125n, 131n] },
  { kind: 'cluster', next: 0n, appliedAfter: [] },
];

const utf8 = (s: string): Uint8Array => Buffer.from(s, 'utf8');

describe('consumer position record', () => {
  it('round-trips every kind, versioned', () => {
    for (const p of samples) {
      const bytes = encodeConsumerPosition(p);
      expect(bytes[1]).toBe(POSITION_FORMAT_VERSION);
      expect(decodeConsumerPosition('k', p.kind, bytes)).toEqual(p);
    }
  });

  it('reads the old forms: mirror and replica JSON, cluster text', () => {
    expect(decodeConsumerPosition('k', 'mirror', utf8('{"topic":"t","seq":41}'))).toEqual({
      kind: 'mirror',
      topic: 't',
      seq: 41,
    });
    expect(decodeConsumerPosition('k', 'replica', utf8('{"topic":"t","offset":"77","seq":5}'))).toEqual({
      kind: 'replica',
      topic: 't',
      offset: '77',
      seq: 5,
    });
    expect(decodeConsumerPosition('k', 'cluster', utf8('120;125,131'))).toEqual(samples[2]);
    expect(decodeConsumerPosition('k', 'cluster', utf8('7'))).toEqual({ kind: 'cluster', next: 7n, appliedAfter: [] });
  });

  it('refuses a flipped bit anywhere in the record', () => {
    const good = encodeConsumerPosition(samples[2]);
    for (let i = 1; i < good.length; i++) {
      const bad = Uint8Array.from(good);
      bad[i] ^= 0x10;
      expect(() => decodeConsumerPosition('log/3', 'cluster', bad), `byte ${i}`).toThrow(PositionCorruptError);
    }
  });

  it('names the key and the reason: a newer version, another kind, garbage', () => {
    const mirror = encodeConsumerPosition(samples[0]);
    expect(() => decodeConsumerPosition('kafka-replica', 'replica', mirror)).toThrow(
      /kafka-replica is unreadable: holds a position of another kind/,
    );
    const newer = Buffer.from(encodeConsumerPosition({ kind: 'cluster', next: 1n, appliedAfter: [] }));
    newer[1] = POSITION_FORMAT_VERSION + 1;
    // Re-checksummed, so only the version is wrong.
    newer.writeUInt32LE(crc32c(newer.subarray(7), crc32c(newer.subarray(0, 3))), 3);
    expect(() => decodeConsumerPosition('log/0', 'cluster', newer)).toThrow(
      `format version ${POSITION_FORMAT_VERSION + 1} is newer than this build reads`,
    );
    expect(() => decodeConsumerPosition('log/0', 'cluster', utf8('x;1'))).toThrow(/not an offset/);
    expect(() => decodeConsumerPosition('kafka-mirror', 'mirror', utf8('{"topic":"t"'))).toThrow(/not a position/);
  });
});
