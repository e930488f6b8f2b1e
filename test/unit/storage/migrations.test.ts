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

describe('format migrations', () => {
  it('stamps a fresh store with the newest version', async () => {
    expect(await formatVersion(db)).toBe(0);
    expect(await runMigrations(db, captureLogger().logger)).toEqual({ from: 0, to: MIGRATIONS.length });
    expect(await formatVersion(db)).toBe(1);
  });

  it('does nothing on an already-current store', async () => {
    await runMigrations(db, captureLogger().logger);
    const { logger, lines } = captureLogger();
    expect(await runMigrations(db, logger)).toEqual({ from: 1, to: 1 });
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
    const list = [...MIGRATIONS, step(2), step(3)];
    expect(await runMigrations(db, captureLogger().logger, list)).toEqual({ from: 1, to: 3 });
    expect(ran).toEqual([2, 3]);
    expect(await formatVersion(db)).toBe(3);
  });

  it('stops at the failed step, keeping the versions that completed', async () => {
    const broken: Migration = { version: 2, description: 'breaks', up: async () => Promise.reject(new Error('boom')) };
    await expect(runMigrations(db, captureLogger().logger, [...MIGRATIONS, broken])).rejects.toThrow('boom');
    expect(await formatVersion(db)).toBe(1);
  });

  it('refuses a store written by a newer build', async () => {
    const future: Migration = { version: 2, description: 'future', up: async () => {} };
    await runMigrations(db, captureLogger().logger, [...MIGRATIONS, future]);
    await expect(runMigrations(db, captureLogger().logger)).rejects.toThrow(FormatTooNewError);
    await db.close();
    const err = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FormatTooNewError);
    expect((err as Error).message).toMatch(/format version 2, but this build supports up to 1/);
  });

  it('rejects a migration list with gaps', async () => {
    const skip: Migration = { version: 3, description: 'gap', up: async () => {} };
    await expect(runMigrations(db, captureLogger().logger, [...MIGRATIONS, skip])).rejects.toThrow(/expected 2/);
  });
});
