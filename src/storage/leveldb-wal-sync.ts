// Makes every LevelDB WAL file durable, by path. LevelDB fsyncs only the WAL it currently writes:
// when its memtable fills it closes the old WAL without an fsync and opens a new one, and the old
// WAL stays the only copy of its writes until the memtable's table file is written. A synced
// write after that switch reaches the new WAL only, so unsynced writes still in the old one could
// be lost by a power cut while the newer ones are kept: a hole in the event log. The event log
// runs this before a synced write that must cover earlier unsynced ones (event-log.ts).
import { join } from 'node:path';
import { fsyncPath } from './durable-fs.js';
import { walFileNames } from './leveldb-wal.js';

/** fsyncs each NNNNNN.log of `levelDbDir`; one deleted meanwhile (its table was written) is skipped. */
export async function syncWalFiles(levelDbDir: string): Promise<void> {
  for (const name of await walFileNames(levelDbDir)) {
    await fsyncPath(join(levelDbDir, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}
