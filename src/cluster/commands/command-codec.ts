// The wire form of a command: a version byte, a 4-byte big-endian header length, the header as
// JSON (64-bit integers as {"$n":"…"}), then the body bytes of an import. A reader refuses a
// version it does not know: a node running an older build stops rather than misapplies.
//
// Kafka refuses batches above ~1 MiB, so a larger command is cut into chunks (headers bl-cid, the
// command's id, and bl-chunk "i/n"); the producer sends the chunks of one command inside one
// transaction, so a read-committed reader sees all of them or none. The assembler still drops a
// chunk run it cannot complete (as the mirror's does) instead of gluing two commands together.
import type { IHeaders, Message } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import type { Command } from './command.js';

/** 2: commands carry their coordinator's time (command.ts, Stamp); version 1 is still read. */
export const COMMAND_VERSION = 2;
const READABLE_VERSIONS = new Set([1, 2]);
/** Chunk payload: below Kafka's default 1 MiB message limit with room for headers and batch. */
export const COMMAND_CHUNK_BYTES = 900 * 1024;
export const H_CID = 'bl-cid';
export const H_CHUNK = 'bl-chunk';

export class CommandFormatError extends Error {
  override name = 'CommandFormatError';
}

export function encodeCommand(cmd: Command): Buffer {
  const { body, rest } = splitBody(cmd);
  const header = Buffer.from(
    JSON.stringify(rest, (_k, v: unknown) => (typeof v === 'bigint' ? { $n: v.toString() } : v)),
    'utf8',
  );
  const out = Buffer.allocUnsafe(5 + header.length + (body?.byteLength ?? 0));
  out[0] = COMMAND_VERSION;
  out.writeUInt32BE(header.length, 1);
  header.copy(out, 5);
  if (body !== undefined) out.set(body, 5 + header.length);
  return out;
}

export function decodeCommand(buf: Buffer, where: string): Command {
  if (buf.length < 5) throw new CommandFormatError(`${where}: not a bitledger cluster command (too short)`);
  if (!READABLE_VERSIONS.has(buf[0]))
    throw new CommandFormatError(
      `${where}: command format version ${buf[0]}, this build reads versions ${[...READABLE_VERSIONS].join(' and ')}`,
    );
  const len = buf.readUInt32BE(1);
  if (5 + len > buf.length) throw new CommandFormatError(`${where}: command header runs past the message`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(buf.subarray(5, 5 + len).toString('utf8'), (_k, v: unknown) => (isBig(v) ? BigInt(v.$n) : v));
  } catch (err) {
    throw new CommandFormatError(`${where}: command header is not JSON (${String(err)})`);
  }
  const cmd = parsed as Command;
  if (cmd.kind === 'import') return { ...cmd, body: buf.subarray(5 + len) };
  return cmd;
}

function isBig(v: unknown): v is { $n: string } {
  return (
    typeof v === 'object' &&
    v !== null &&
    Object.keys(v).length === 1 &&
    typeof (v as { $n?: unknown }).$n === 'string' &&
    /^-?\d+$/.test((v as { $n: string }).$n)
  );
}

function splitBody(cmd: Command): { body: Uint8Array | undefined; rest: object } {
  if (cmd.kind !== 'import') return { body: undefined, rest: cmd };
  const { body, ...rest } = cmd;
  return { body, rest };
}

/** The messages of one command: one, or chunks of at most `chunkBytes` sharing an id. */
export function commandMessages(cmd: Command, chunkBytes = COMMAND_CHUNK_BYTES): Message[] {
  const value = encodeCommand(cmd);
  // Kafka's own timestamp is the command's time too, so the broker's time index finds commands by it.
  const ts = cmd.time === undefined ? {} : { timestamp: String(cmd.time) };
  if (value.byteLength <= chunkBytes) return [{ value, ...ts }];
  const id = randomUUID();
  const n = Math.ceil(value.byteLength / chunkBytes);
  const out: Message[] = [];
  for (let i = 0; i < n; i++)
    out.push({
      value: value.subarray(i * chunkBytes, (i + 1) * chunkBytes),
      headers: { [H_CID]: id, [H_CHUNK]: `${i}/${n}` },
      ...ts,
    });
  return out;
}

function header(headers: IHeaders | undefined, key: string): string | undefined {
  const v = headers?.[key];
  const one = Array.isArray(v) ? v[0] : v;
  return one === undefined ? undefined : one.toString();
}

/** A whole command's bytes and the offsets of its first and last message. */
export interface AssembledCommand {
  value: Buffer;
  firstOffset: string;
  lastOffset: string;
  /** Kafka timestamp of its first message (ms, decimal): the time of a command that carries none. */
  timestamp?: string;
}

interface Pending {
  id: string;
  next: number;
  count: number;
  parts: Buffer[];
  firstOffset: string;
  timestamp?: string;
}

/**
 * Reassembles commands from the messages of one partition, read in offset order. Chunks of
 * commands sent by concurrent transactions interleave, so several commands can be in assembly
 * at once, each by its id. Chunks are only sent in transactions, so a read-committed reader sees
 * every chunk of a command or none; a chunk out of order is a broken writer: its command is dropped.
 */
export class CommandAssembler {
  private readonly pending = new Map<string, Pending>();

  /** Offset of the first message of the earliest command not complete yet (undefined: none). */
  get pendingFrom(): string | undefined {
    let min: bigint | undefined;
    for (const p of this.pending.values()) {
      const o = BigInt(p.firstOffset);
      if (min === undefined || o < min) min = o;
    }
    return min === undefined ? undefined : String(min);
  }

  reset(): void {
    this.pending.clear();
  }

  /** Feeds one message; returns the command it completes, if any. */
  push(msg: {
    offset: string;
    headers?: IHeaders;
    value: Buffer | null;
    timestamp?: string;
  }): AssembledCommand | undefined {
    const value = msg.value ?? Buffer.alloc(0);
    const chunk = header(msg.headers, H_CHUNK);
    const stamp = msg.timestamp === undefined ? {} : { timestamp: msg.timestamp };
    if (chunk === undefined) return { value, firstOffset: msg.offset, lastOffset: msg.offset, ...stamp };
    const m = /^(\d+)\/(\d+)$/.exec(chunk);
    const id = header(msg.headers, H_CID);
    if (m === null || id === undefined)
      throw new CommandFormatError(`offset ${msg.offset}: bad chunk headers ${H_CHUNK}=${chunk} ${H_CID}=${id}`);
    const [i, n] = [Number(m[1]), Number(m[2])];
    if (i === 0) this.pending.set(id, { id, next: 0, count: n, parts: [], firstOffset: msg.offset, ...stamp });
    const p = this.pending.get(id);
    if (p === undefined || p.next !== i || p.count !== n) {
      this.pending.delete(id);
      return undefined;
    }
    p.parts.push(value);
    p.next++;
    if (p.next < p.count) return undefined;
    this.pending.delete(id);
    const first = p.timestamp === undefined ? {} : { timestamp: p.timestamp };
    return { value: Buffer.concat(p.parts), firstOffset: p.firstOffset, lastOffset: msg.offset, ...first };
  }
}
