// Every consumer position the log's metadata stores (the Kafka mirror's cursor, a replica's
// position, each cluster partition's position) in one record format, versioned and checksummed:
//   0xB7 | version u8 | kind u8 | CRC32C u32 LE over (magic ‖ version ‖ kind ‖ body) | body
// with the body the position's fields as UTF-8 JSON (64-bit offsets as decimal strings). A
// position that fails its checksum stops startup: resuming from a damaged one would skip or
// repeat records silently. The forms written before this record (JSON for the mirror and the
// replica, "next;after,…" text for cluster partitions) are still read; the next write of each
// position replaces it with the record.
import { crc32c } from './checksum.js';
import { PositionCorruptError } from './errors.js';

const MAGIC = 0xb7;
/** The record version this build writes; it reads every version up to it. */
export const POSITION_FORMAT_VERSION = 1;
const HEAD = 7;

/** The Kafka mirror: the highest log sequence the topic acknowledged. */
export interface MirrorPosition {
  kind: 'mirror';
  topic: string;
  seq: number;
}
/** A replica: the last applied offset of the primary's topic and the sequence it carried. */
export interface ReplicaPosition {
  kind: 'replica';
  topic: string;
  offset: string;
  seq: number;
}
/**
 * A cluster partition: the next offset to read and the last offsets of commands already
 * applied beyond it (cluster/commands/position.ts says why those exist).
 */
export interface ClusterPosition {
  kind: 'cluster';
  next: bigint;
  appliedAfter: readonly bigint[];
}
export type ConsumerPosition = MirrorPosition | ReplicaPosition | ClusterPosition;
type Kind = ConsumerPosition['kind'];
type PositionOf<K extends Kind> = Extract<ConsumerPosition, { kind: K }>;

const KIND_CODES: Record<Kind, number> = { mirror: 1, replica: 2, cluster: 3 };

export function encodeConsumerPosition(p: ConsumerPosition): Uint8Array {
  const fields =
    p.kind === 'cluster'
      ? { next: p.next.toString(), appliedAfter: p.appliedAfter.map(String) }
      : p.kind === 'mirror'
        ? { topic: p.topic, seq: p.seq }
        : { topic: p.topic, offset: p.offset, seq: p.seq };
  const body = Buffer.from(JSON.stringify(fields), 'utf8');
  const out = Buffer.alloc(HEAD + body.length);
  out[0] = MAGIC;
  out[1] = POSITION_FORMAT_VERSION;
  out[2] = KIND_CODES[p.kind];
  body.copy(out, HEAD);
  out.writeUInt32LE(recordCrc(out), 3);
  return out;
}

/** Reads a stored position of `kind` (`key` names it in errors), in the record or an old form. */
export function decodeConsumerPosition<K extends Kind>(key: string, kind: K, value: Uint8Array): PositionOf<K> {
  const buf = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const fields = buf[0] === MAGIC ? recordFields(key, kind, buf) : oldFields(key, kind, buf.toString('utf8'));
  return checked(key, kind, fields);
}

function recordCrc(buf: Buffer): number {
  return crc32c(buf.subarray(HEAD), crc32c(buf.subarray(0, 3)));
}

function recordFields(key: string, kind: Kind, buf: Buffer): Record<string, unknown> {
  if (buf.length < HEAD) throw new PositionCorruptError(key, `a record of ${buf.length} bytes is truncated`);
  if (buf.readUInt32LE(3) !== recordCrc(buf)) throw new PositionCorruptError(key, 'checksum mismatch');
  if (buf[1] === 0 || buf[1] > POSITION_FORMAT_VERSION)
    throw new PositionCorruptError(
      key,
      `format version ${buf[1]} is newer than this build reads (${POSITION_FORMAT_VERSION}): run the newer build`,
    );
  if (buf[2] !== KIND_CODES[kind]) throw new PositionCorruptError(key, `holds a position of another kind (${buf[2]})`);
  return parseJson(key, buf.subarray(HEAD).toString('utf8'));
}

/** The forms written before the record: JSON objects, and cluster's "next;after,…" text. */
function oldFields(key: string, kind: Kind, text: string): Record<string, unknown> {
  if (kind !== 'cluster') return parseJson(key, text);
  const [next, after] = text.split(';');
  return { next, appliedAfter: after === undefined || after === '' ? [] : after.split(',') };
}

function parseJson(key: string, text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null) return v as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new PositionCorruptError(key, 'not a position');
}

function checked<K extends Kind>(key: string, kind: K, f: Record<string, unknown>): PositionOf<K> {
  const int = (v: unknown): bigint => {
    if ((typeof v !== 'string' && typeof v !== 'number') || !/^\d+$/.test(String(v)))
      throw new PositionCorruptError(key, `${JSON.stringify(v)} is not an offset`);
    return BigInt(v);
  };
  const seq = (v: unknown): number => {
    if (!Number.isSafeInteger(v) || (v as number) < 0)
      throw new PositionCorruptError(key, `${JSON.stringify(v)} is not a sequence`);
    return v as number;
  };
  const topic = (v: unknown): string => {
    if (typeof v !== 'string') throw new PositionCorruptError(key, 'no topic');
    return v;
  };
  const p: ConsumerPosition =
    kind === 'cluster'
      ? { kind, next: int(f.next), appliedAfter: Array.isArray(f.appliedAfter) ? f.appliedAfter.map(int) : [] }
      : kind === 'mirror'
        ? { kind, topic: topic(f.topic), seq: seq(f.seq) }
        : { kind: 'replica', topic: topic(f.topic), offset: int(f.offset).toString(), seq: seq(f.seq) };
  return p as PositionOf<K>;
}
