import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, EventLog, ensureDataDir, nodeId, openLevelDb } from '../../../src/storage/index.js';
import { captureLogger, tempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  await cleanup();
});

describe('data directory', () => {
  it('ensureDataDir creates nested directories and is idempotent', async () => {
    const nested = join(dir, 'a', 'b');
    await ensureDataDir(nested);
    await ensureDataDir(nested);
    expect(await nodeId(nested)).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('nodeId is a UUIDv4, persisted and stable', async () => {
    const id = await nodeId(dir);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await nodeId(dir)).toBe(id);
    expect((await readFile(join(dir, '.id'), 'utf8')).trim()).toBe(id);
  });

  it('refuses a second open of the same data directory with a clear error', async () => {
    const log = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
    const err = await openLevelDb(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DataDirInUseError);
    expect((err as Error).message).toBe(`data directory ${dir} is in use by another process`);
    await expect(EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger })).rejects.toThrow(
      DataDirInUseError,
    );
    await log.close();
    const db = await openLevelDb(dir); // free again once closed
    await db.close();
  });
});
