// `bitledger log verify` on a real LevelDB directory: intact, a flipped byte inside a record, a
// record deleted from the middle, a damaged snapshot. It must name the sequence or the file, and
// must not repair anything (opening the log would drop a damaged tail as torn).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { logCommand } from '../../../src/cli/log.js';
import { EventLog, SnapshotStore } from '../../../src/storage/index.js';
import { snapshotFileName } from '../../../src/storage/snapshot-store.js';
import { bytes, captureLogger, rawLogKey, tempDir, withRawDb } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
const quiet = pino({ level: 'silent' });

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  const log = await EventLog.open(dir, { fsync: 'always', logger: captureLogger().logger });
  for (let i = 0; i < 10; i++)
    await log.append([
      { type: 1, payload: bytes(`record ${i + 1}`) },
      { type: 1, payload: bytes(`second ${i + 1}`) },
    ]);
  const snaps = await SnapshotStore.open(dir, captureLogger().logger);
  await snaps.write(8, [bytes('state at 8')], await log.commitTime(8));
  await log.close();
});
afterEach(async () => {
  await cleanup();
});

async function verify(): Promise<string> {
  const lines: string[] = [];
  try {
    await logCommand(['verify', '--data-dir', dir], quiet, (l) => lines.push(l));
    return lines.join('\n');
  } catch (err) {
    return `ERROR ${(err as Error).name}: ${(err as Error).message}`;
  }
}

describe('log verify', () => {
  it('passes an intact directory', async () => {
    expect(await verify()).toMatch(/OK: records 1\.\.20 \(20\) .* snapshots 8 valid/);
  });

  it('names the sequence of a flipped byte, and leaves the record in place', async () => {
    await withRawDb(dir, async (db) => {
      const v = (await db.get(rawLogKey(13))) as Buffer;
      v[v.length - 2] ^= 0x10;
      await db.put(rawLogKey(13), v);
    });
    expect(await verify()).toMatch(/^ERROR LogVerifyError: log verify: record 13 is damaged: CRC32C mismatch/);
    // verify repairs nothing: a second run finds the same damage.
    expect(await verify()).toMatch(/record 13/);
  });

  it('names where a gap is', async () => {
    await withRawDb(dir, async (db) => {
      await db.del(rawLogKey(6));
      await db.del(rawLogKey(7));
    });
    expect(await verify()).toMatch(
      /^ERROR LogVerifyError: log verify: gap: records 6\.\.7 are missing \(sequence 5 is followed by 8\)/,
    );
  });

  it('names a damaged snapshot', async () => {
    const file = join(dir, 'snapshots', snapshotFileName(8));
    const buf = await readFile(file);
    buf[34] ^= 1;
    await writeFile(file, buf);
    expect(await verify()).toMatch(/^ERROR LogVerifyError: log verify: snapshot 8 is damaged: .*CRC32C mismatch/);
  });
});
