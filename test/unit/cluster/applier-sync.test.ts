// The applier's commits and fsync (cluster/commands/applier.ts): a command read from the topics is
// committed without an fsync of its own by default (its durability is Kafka's; the log syncs it
// within a second), and with one when the node mirrors its log (syncCommits). Seen on the
// in-memory disk, which counts the writes that reached the WAL but are not yet durable.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CommandApplier } from '../../../src/cluster/commands/applier.js';
import type { Command } from '../../../src/cluster/commands/command.js';
import { encodeCommand } from '../../../src/cluster/commands/command-codec.js';
import { bootstrap } from '../../../src/engine/bootstrap.js';
import { testEngine } from '../../helpers/test-engine.js';
import { ImportService } from '../../../src/service/import/import-service.js';
import { SchemaService } from '../../../src/service/schema-service.js';
import { EventLog } from '../../../src/storage/event-log.js';
import { MemoryDisk } from '../../../src/storage/memory/memory-disk.js';
import { MemoryKv } from '../../../src/storage/memory/memory-kv.js';
import { MemorySnapshots } from '../../../src/storage/memory/memory-snapshots.js';
import { systemClock } from '../../../src/util/clock.js';

const silent = pino({ level: 'silent' });

/** Applies two schema commands of NAME.meta; returns the disk's unsynced writes after them. */
async function unsyncedAfterApplies(syncCommits: boolean | undefined): Promise<number> {
  const disk = new MemoryDisk(systemClock);
  const log = await EventLog.openOn(new MemoryKv(disk), { fsync: 'always', logger: silent });
  const snapshots = new MemorySnapshots(disk);
  const { holder } = await bootstrap(log, snapshots, silent);
  const engine = testEngine(holder, log, snapshots, silent);
  const applier = new CommandApplier(
    {
      engine,
      schema: new SchemaService(engine),
      imports: new ImportService(engine),
      partitionOf: () => 0,
      logger: silent,
    },
    syncCommits === undefined ? {} : { syncCommits },
  );
  // Opening the log cleared stray commit times unsynced: a synced write first, so only the
  // applier's writes can be left unsynced.
  await engine.commit({ cursors: [{ key: 'test/start', value: Buffer.from('1') }], origin: 'cluster', sync: true });
  expect(disk.unsynced).toBe(0);
  const commands: Command[] = [
    {
      kind: 'schema',
      time: 1,
      schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: false } },
    },
    { kind: 'schema', time: 1, schema: { op: 'deleteIndex', index: 'i' } },
  ];
  const messages = commands.map((cmd, i) => ({ offset: String(i), value: encodeCommand(cmd) }));
  await applier.deliver('meta', 0, messages, String(messages.length));
  expect(applier.position('meta', 0)).toBe(2n);
  const unsynced = disk.unsynced;
  await engine.stop();
  await log.close();
  return unsynced;
}

describe('CommandApplier: fsync of its commits', () => {
  it('commits a command from the topics without its own fsync by default', async () => {
    expect(await unsyncedAfterApplies(undefined)).toBe(2);
  });

  it('commits each with its fsync on a node that mirrors its log', async () => {
    expect(await unsyncedAfterApplies(true)).toBe(0);
  });
});
