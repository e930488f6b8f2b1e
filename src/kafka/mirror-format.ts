// The mirror topic's message format, shared by the mirror (writer) and the replica (reader).
// One log record = one message: headers bl-seq (log sequence) and bl-type (event type byte);
// value = the protobuf payload, exactly the bytes of the log, and bl-v (the log format version;
// format-1 writers sent none, so a missing bl-v means 1). A reader takes every version up to its
// own and refuses newer ones: an older replica stops rather than misreads. Headers are kept few
// because the client pays per header per message. Kafka refuses record batches above ~1 MiB, so a larger
// payload is cut into chunks (header bl-chunk "i/n"), sent in order; a re-send after a failure
// starts again at chunk 0, so a reader restarts assembly at every chunk 0 and drops fragments it
// cannot complete. bl-time carries the record's commit time (ms) when known, so a restore from the
// topic can stop at a time.
import type { IHeaders, Message } from 'kafkajs';
import { LOG_FORMAT_VERSION } from '../events/codec.js';

export const MIRROR_CHUNK_BYTES = 256 * 1024;
const VERSION_TEXT = String(LOG_FORMAT_VERSION);

export const H_SEQ = 'bl-seq';
export const H_TYPE = 'bl-type';
export const H_VERSION = 'bl-v';
export const H_CHUNK = 'bl-chunk';
export const H_TIME = 'bl-time';

export interface MirrorRecord {
  seq: number;
  type: number;
  payload: Uint8Array;
  /** Topic offset of the record's last message: where a reader has fully consumed it. */
  lastOffset: string;
  /** Commit time (ms) from bl-time; null when the writer did not know it (or predates the header). */
  timeMs: number | null;
}

export class MirrorFormatError extends Error {
  override name = 'MirrorFormatError';
}

/** The messages for one log record (several when the payload is larger than a chunk). */
export function recordMessages(rec: {
  seq: number;
  type: number;
  payload: Uint8Array;
  timeMs?: number | null;
}): Message[] {
  const base: Record<string, string> = {
    [H_SEQ]: String(rec.seq),
    [H_TYPE]: String(rec.type),
    [H_VERSION]: VERSION_TEXT,
  };
  if (typeof rec.timeMs === 'number') base[H_TIME] = String(rec.timeMs);
  const value = Buffer.from(rec.payload.buffer, rec.payload.byteOffset, rec.payload.byteLength);
  if (value.byteLength <= MIRROR_CHUNK_BYTES) return [{ value, headers: base }];
  const n = Math.ceil(value.byteLength / MIRROR_CHUNK_BYTES);
  const out: Message[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      value: value.subarray(i * MIRROR_CHUNK_BYTES, (i + 1) * MIRROR_CHUNK_BYTES),
      headers: { ...base, [H_CHUNK]: `${i}/${n}` },
    });
  }
  return out;
}

export function headerText(headers: IHeaders | undefined, key: string): string | undefined {
  const v = headers?.[key];
  if (v === undefined) return undefined;
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined ? undefined : one.toString();
}

interface Pending {
  seq: number;
  type: number;
  next: number;
  count: number;
  parts: Buffer[];
}

/** Reassembles records from mirror messages read in topic order. */
export class MirrorAssembler {
  private pending: Pending | undefined;

  reset(): void {
    this.pending = undefined;
  }

  /** Feeds one message; returns the record it completes, if any. */
  push(msg: { offset: string; headers?: IHeaders; value: Buffer | null }): MirrorRecord | undefined {
    const seq = Number(headerText(msg.headers, H_SEQ));
    const type = Number(headerText(msg.headers, H_TYPE));
    const version = Number(headerText(msg.headers, H_VERSION) ?? 1);
    if (!Number.isSafeInteger(seq) || seq < 1 || !Number.isInteger(type) || type < 0 || type > 255) {
      throw new MirrorFormatError(
        `offset ${msg.offset}: not a bitledger mirror message (headers ${H_SEQ}/${H_TYPE} missing or invalid)`,
      );
    }
    if (!Number.isInteger(version) || version < 1 || version > LOG_FORMAT_VERSION) {
      throw new MirrorFormatError(
        `offset ${msg.offset}: log format version ${version}, this build reads up to ${LOG_FORMAT_VERSION}`,
      );
    }
    const value = msg.value ?? Buffer.alloc(0);
    const timeText = headerText(msg.headers, H_TIME);
    const timeMs = timeText === undefined || !/^\d+$/.test(timeText) ? null : Number(timeText);
    const chunk = headerText(msg.headers, H_CHUNK);
    if (chunk === undefined) {
      this.pending = undefined;
      return { seq, type, payload: value, lastOffset: msg.offset, timeMs };
    }
    const m = /^(\d+)\/(\d+)$/.exec(chunk);
    if (m === null) throw new MirrorFormatError(`offset ${msg.offset}: bad ${H_CHUNK} header ${chunk}`);
    const i = Number(m[1]);
    const n = Number(m[2]);
    if (i === 0) this.pending = { seq, type, next: 0, count: n, parts: [] };
    const p = this.pending;
    // A fragment of an interrupted send (its re-send starts over at chunk 0): skip it.
    if (p === undefined || p.seq !== seq || p.next !== i || p.count !== n) {
      this.pending = undefined;
      return undefined;
    }
    p.parts.push(value);
    p.next++;
    if (p.next < p.count) return undefined;
    this.pending = undefined;
    return { seq, type, payload: Buffer.concat(p.parts), lastOffset: msg.offset, timeMs };
  }
}
