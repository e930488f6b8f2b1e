// The mirror topic's framing: every message names the log format it carries (bl-v), readers take
// format 1 (written before bl-v existed) up to their own and refuse anything newer, and payloads
// larger than a chunk are cut and reassembled in order.
import type { IHeaders } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { LOG_FORMAT_VERSION } from '../../../src/events/codec.js';
import {
  H_SEQ,
  H_TYPE,
  H_VERSION,
  MIRROR_CHUNK_BYTES,
  MirrorAssembler,
  MirrorFormatError,
  recordMessages,
} from '../../../src/kafka/mirror-format.js';

const asRead = (
  m: { value: Buffer | string | null; headers?: IHeaders },
  offset: number,
): { offset: string; headers?: IHeaders; value: Buffer | null } => ({
  offset: String(offset),
  headers: m.headers,
  value: m.value === null ? null : Buffer.from(m.value),
});

describe('mirror message format', () => {
  it('stamps every message with the log format version and reassembles chunked payloads', () => {
    const payload = Buffer.alloc(MIRROR_CHUNK_BYTES * 2 + 10, 7);
    const msgs = recordMessages({ seq: 5, type: 9, payload });
    expect(msgs).toHaveLength(3);
    for (const m of msgs) expect(String(m.headers?.[H_VERSION])).toBe(String(LOG_FORMAT_VERSION));
    const a = new MirrorAssembler();
    const out = msgs.map((m, i) => a.push(asRead(m, i)));
    expect(out.slice(0, 2)).toEqual([undefined, undefined]);
    expect(out[2]).toMatchObject({ seq: 5, type: 9, lastOffset: '2' });
    expect(Buffer.compare(Buffer.from(out[2]!.payload), payload)).toBe(0);
  });

  it('reads format-1 messages, which carry no version header', () => {
    const r = new MirrorAssembler().push({
      offset: '0',
      headers: { [H_SEQ]: '3', [H_TYPE]: '5' },
      value: Buffer.from([1, 2]),
    });
    expect(r).toMatchObject({ seq: 3, type: 5 });
  });

  it('refuses a newer log format instead of misreading it', () => {
    const headers = { [H_SEQ]: '3', [H_TYPE]: '5', [H_VERSION]: String(LOG_FORMAT_VERSION + 1) };
    expect(() => new MirrorAssembler().push({ offset: '4', headers, value: Buffer.from([1]) })).toThrow(
      MirrorFormatError,
    );
    expect(() => new MirrorAssembler().push({ offset: '4', headers, value: Buffer.from([1]) })).toThrow(
      `log format version ${LOG_FORMAT_VERSION + 1}, this build reads up to ${LOG_FORMAT_VERSION}`,
    );
  });
});
