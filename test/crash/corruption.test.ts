// Log and snapshot corruption: a torn or corrupt last record is dropped with a warning and the
// server starts; a corrupt record in the middle stops startup naming the sequence; a corrupt
// newest snapshot falls back to the previous one plus a longer replay.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RoaringBitmap32 } from '../../src/roaring/bitmap.js';
import { stateDigest } from '../../src/state/digest.js';
import { openLevelDb } from '../../src/storage/index.js';
import { pino } from 'pino';
import { truncateLog } from '../../src/cli/maintenance.js';
import { DEFAULTS } from '../../src/config/config.js';
import { removeDir, startServer, type TestServer } from '../helpers/server.js';

async function seed(server: TestServer, sets: number, firstCol = 0): Promise<void> {
  if (!server.engine.peekApplied((h) => h.index('c'))) {
    await server.engine.commit({
      decide: (_h, sink) => {
        sink.emit({ type: 'IndexCreated', index: 'c', options: { keys: false, trackExistence: false } });
        sink.emit({
          type: 'FieldCreated',
          index: 'c',
          field: 'f',
          options: {
            type: 'set',
            cacheType: 'ranked',
            cacheSize: 100,
            keys: false,
            min: 0n,
            max: 0n,
            timeQuantum: '',
            noStandardView: false,
          },
        });
      },
    });
  }
  for (let i = 0; i < sets; i++) {
    await server.engine.commit({
      decide: (_h, sink) =>
        sink.emit({
          type: 'BitsSet',
          index: 'c',
          field: 'f',
          view: 'standard',
          shard: 0,
          rows: [i % 3],
          columns: [new RoaringBitmap32([firstCol + i])],
        }),
    });
  }
}

const columns = (server: TestServer): number[] => {
  const frag = server.engine
    .peekApplied((h) => h.index('c'))
    ?.field('f')
    ?.view('standard')
    ?.fragment(0);
  if (!frag) return [];
  return [0, 1, 2].flatMap((r) => frag.row(r)?.toArray() ?? []).sort((a, b) => a - b);
};

/** Rewrites the value of the log record with the given sequence (or the last one). */
async function damageRecord(dataDir: string, how: (v: Buffer) => Buffer, seq?: number): Promise<number> {
  const db = await openLevelDb(dataDir);
  try {
    const keys = (await db.keys({ gte: Buffer.from('L'), lt: Buffer.from('M') }).all()) as Buffer[];
    const key = seq === undefined ? keys[keys.length - 1] : keys.find((k) => Number(k.readBigUInt64BE(1)) === seq)!;
    const value = (await db.get(key)) as Buffer;
    await db.put(key, how(Buffer.from(value)), { sync: true });
    return Number(key.readBigUInt64BE(1));
  } finally {
    await db.close();
  }
}

const flip =
  (at: (v: Buffer) => number) =>
  (v: Buffer): Buffer => {
    v[at(v)] ^= 0x5a;
    return v;
  };

describe('corruption', () => {
  it('drops a truncated last record and starts', async () => {
    let server = await startServer();
    await seed(server, 20);
    await server.close();
    await damageRecord(server.dataDir, (v) => v.subarray(0, Math.max(1, v.length - 7)));
    server = await startServer({ dataDir: server.dataDir });
    expect(columns(server)).toEqual(Array.from({ length: 19 }, (_, i) => i));
    // The log continues after the dropped record.
    await seed(server, 1, 100);
    expect(columns(server)).toContain(100);
    await server.close();
    removeDir(server.dataDir);
  });

  it('drops a last record with a flipped byte and starts', async () => {
    let server = await startServer();
    await seed(server, 20);
    await server.close();
    await damageRecord(
      server.dataDir,
      flip((v) => v.length - 2),
    );
    server = await startServer({ dataDir: server.dataDir });
    expect(columns(server)).toEqual(Array.from({ length: 19 }, (_, i) => i));
    await server.close();
    removeDir(server.dataDir);
  });

  it('refuses to start on a flipped byte in a middle record, naming the sequence', async () => {
    const server = await startServer();
    await seed(server, 20);
    await server.close();
    const seq = await damageRecord(
      server.dataDir,
      flip((v) => v.length - 3),
      10,
    );
    await expect(startServer({ dataDir: server.dataDir })).rejects.toThrow(
      new RegExp(`sequence ${seq}\\b[^]*(backup|truncate)`),
    );
    // The damage was not "repaired" away: a second start refuses too.
    await expect(startServer({ dataDir: server.dataDir })).rejects.toThrow(/corrupt/);
    // The repair the message names works: drop from the bad record on, and the server starts.
    const lines: string[] = [];
    await truncateLog({ ...DEFAULTS, dataDir: server.dataDir }, seq - 1, pino({ level: 'silent' }), (l) =>
      lines.push(l),
    );
    expect(lines.join('\n')).toMatch(/dropped \d+ records after sequence/);
    const repaired = await startServer({ dataDir: server.dataDir });
    expect(repaired.engine.appliedSeq).toBe(seq - 1);
    await repaired.close();
    removeDir(server.dataDir);
  });

  it('falls back to the previous snapshot when the newest is corrupt', async () => {
    let server = await startServer({ snapshotEveryEvents: 1e9 });
    await seed(server, 10);
    const first = await server.engine.snapshot();
    await seed(server, 10, 10);
    const second = await server.engine.snapshot();
    await seed(server, 10, 20);
    expect(second).toBeGreaterThan(first);
    const digest = server.engine.peekApplied(stateDigest);
    await server.close();
    const dir = join(server.dataDir, 'snapshots');
    const newest = readdirSync(dir)
      .filter((f) => f.endsWith('.snap'))
      .sort()
      .pop()!;
    const bytes = readFileSync(join(dir, newest));
    bytes[Math.floor(bytes.length / 2)] ^= 0xff;
    writeFileSync(join(dir, newest), bytes);
    server = await startServer({ dataDir: server.dataDir });
    expect(server.engine.peekApplied(stateDigest)).toBe(digest);
    expect(columns(server)).toHaveLength(30);
    await server.close();
    removeDir(server.dataDir);
  });
});
