import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EventLog,
  FormatTooNewError,
  MIGRATIONS,
  formatVersion,
  openLevelDb,
  runMigrations,
  type LevelDb,
  type Migration,
} from '../../../src/storage/index.js';
import { captureLogger, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
let db: LevelDb;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  db = await openLevelDb(dir);
});
afterEach(async () => {
  if (db.status === 'open') await db.close();
  await cleanup();
});

const N = MIGRATIONS.length;

describe('format migrations', () => {
  it('knows format 2 (sparse Bits offsets), so older builds refuse a directory that may hold them', () => {
    expect(N).toBeGreaterThanOrEqual(2);
    expect(MIGRATIONS[1].description).toMatch(/sparse/);
  });

  it('stamps a fresh store with the newest version', async () => {
    expect(await formatVersion(db)).toBe(0);
    expect(await runMigrations(db, captureLogger().logger)).toEqual({ from: 0, to: N });
    expect(await formatVersion(db)).toBe(N);
  });

  it('does nothing on an already-current store', async () => {
    await runMigrations(db, captureLogger().logger);
    const { logger, lines } = captureLogger();
    expect(await runMigrations(db, logger)).toEqual({ from: N, to: N });
    expect(lines).toEqual([]);
  });

  it('applies only the steps above the stored version, in order', async () => {
    await runMigrations(db, captureLogger().logger);
    const ran: number[] = [];
    const step = (version: number): Migration => ({
      version,
      description: `step ${version}`,
      up: async (d) => {
        ran.push(version);
        await d.put(Buffer.from(`Mstep-${version}`), Buffer.from([version]), { sync: true });
      },
    });
    const list = [...MIGRATIONS, step(N + 1), step(N + 2)];
    expect(await runMigrations(db, captureLogger().logger, list)).toEqual({ from: N, to: N + 2 });
    expect(ran).toEqual([N + 1, N + 2]);
    expect(await formatVersion(db)).toBe(N + 2);
  });

  it('stops at the failed step, keeping the versions that completed', async () => {
    const broken: Migration = {
      version: N + 1,
      description: 'breaks',
      up: async () => Promise.reject(new Error('boom')),
    };
    await expect(runMigrations(db, captureLogger().logger, [...MIGRATIONS, broken])).rejects.toThrow('boom');
    expect(await formatVersion(db)).toBe(N);
  });

  it('refuses a store written by a newer build', async () => {
    const future: Migration = { version: N + 1, description: 'future', up: async () => {} };
    await runMigrations(db, captureLogger().logger, [...MIGRATIONS, future]);
    await expect(runMigrations(db, captureLogger().logger)).rejects.toThrow(FormatTooNewError);
    await db.close();
    const err = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FormatTooNewError);
    expect((err as Error).message).toMatch(new RegExp(`format version ${N + 1}, but this build supports up to ${N}`));
  });

  it('rejects a migration list with gaps', async () => {
    const skip: Migration = { version: N + 2, description: 'gap', up: async () => {} };
    await expect(runMigrations(db, captureLogger().logger, [...MIGRATIONS, skip])).rejects.toThrow(`expected ${N + 1}`);
  });
});
