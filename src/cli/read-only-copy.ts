// A private copy of a data directory's LevelDB, so that a maintenance read (inspect) can open it
// with LevelDB, which has no read-only mode: an open replays the WAL into a table, starts a new
// WAL, rewrites the MANIFEST and deletes files it considers obsolete. Table files are never
// modified in place, so they are hard-linked (copied across file systems); everything else is
// copied. Only the copy is ever opened; the data directory is read and nothing in it changes.
import { copyFile, link, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LEVELDB_SUBDIR } from '../storage/data-dir.js';

// LevelDB's own lock and text logs: not data, and LOCK must not be shared with the original.
const SKIPPED = new Set(['LOCK', 'LOG', 'LOG.old']);

export async function withLevelDbCopy<T>(dataDir: string, use: (copyDir: string) => Promise<T>): Promise<T> {
  const copy = await mkdtemp(join(tmpdir(), 'bitledger-inspect-'));
  try {
    const from = join(dataDir, LEVELDB_SUBDIR);
    const to = join(copy, LEVELDB_SUBDIR);
    await mkdir(to);
    for (const entry of await readdir(from, { withFileTypes: true })) {
      const name = entry.name;
      if (SKIPPED.has(name) || !entry.isFile()) continue; // e.g. lost/, left by a LevelDB repair
      if (/\.(ldb|sst)$/.test(name))
        await link(join(from, name), join(to, name)).catch(() => copyFile(join(from, name), join(to, name)));
      else await copyFile(join(from, name), join(to, name));
    }
    return await use(copy);
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}
