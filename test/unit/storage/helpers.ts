// Shared fixtures for storage tests: a real temp directory, a pino logger that records what it
// logged, and raw access to the LevelDB behind a data directory (for damaging records).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { pino, type Logger } from 'pino';

export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'bitledger-storage-'));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export function captureLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { logger, lines };
}

export const WARN = 40;

/** Runs `fn` on the raw LevelDB of a data directory whose EventLog is closed. */
export async function withRawDb(
  dataDir: string,
  fn: (db: ClassicLevel<Buffer, Buffer>) => Promise<void>,
): Promise<void> {
  const db = new ClassicLevel<Buffer, Buffer>(join(dataDir, 'leveldb'), {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
  });
  await db.open();
  try {
    await fn(db);
  } finally {
    await db.close();
  }
}

export function rawLogKey(seq: number): Buffer {
  const key = Buffer.alloc(9);
  key[0] = 0x4c;
  key.writeBigUInt64BE(BigInt(seq), 1);
  return key;
}

export const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
export const text = (b: Uint8Array): string => new TextDecoder().decode(b);

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
