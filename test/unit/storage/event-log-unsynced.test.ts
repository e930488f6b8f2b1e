// Appends written without their own sync under --fsync always (AppendOptions.sync false: a
// cluster command, whose durability is Kafka's): such an append is not durable until a synced
// write or the sync armed after it (UNSYNCED_SYNC_MS); a crash before then loses it and the log
// is the prefix before it, positions included; a synced append makes every earlier one durable.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { EventLog, UNSYNCED_SYNC_MS } from '../../../src/storage/event-log.js';
import { MemoryDisk } from '../../../src/storage/memory/memory-disk.js';
import { MemoryKv } from '../../../src/storage/memory/memory-kv.js';
import { type Clock, systemClock } from '../../../src/util/clock.js';

const silent = pino({ level: 'silent' });
const rec = (s: string): { type: number; payload: Uint8Array } => ({ type: 1, payload: Buffer.from(s) });
const pos = (v: string): { key: string; value: Uint8Array } => ({ key: 'position', value: Buffer.from(v) });

/** The system clock, except that timers wait until the test fires them. */
function heldTimers(): { clock: Clock; due: { ms: number; fn: () => void }[] } {
  const due: { ms: number; fn: () => void }[] = [];
  const clock: Clock = {
    ...systemClock,
    setTimeout: (fn, ms) => {
      const t = { ms, fn };
      due.push(t);
      return { cancel: () => due.splice(due.indexOf(t), 1) };
    },
  };
  return { clock, due };
}

async function opened(disk: MemoryDisk, clock: Clock): Promise<EventLog> {
  const log = await EventLog.openOn(new MemoryKv(disk), { fsync: 'always', logger: silent, clock });
  // Opening clears stray commit times unsynced: a synced append makes the start durable.
  await log.append([rec('start')], [pos('1')], { sync: true });
  expect(disk.unsynced).toBe(0);
  return log;
}

async function texts(log: EventLog): Promise<string[]> {
  const out: string[] = [];
  for await (const r of log.read(log.firstSeq)) out.push(Buffer.from(r.payload).toString());
  return out;
}

describe('EventLog: appends without their own sync under --fsync always', () => {
  it('are lost whole by a crash before a sync, with their positions', async () => {
    const disk = new MemoryDisk(systemClock);
    const { clock } = heldTimers();
    const log = await opened(disk, clock);
    await log.append([rec('a')], [pos('2')], { sync: false });
    await log.append([rec('b')], [pos('3')], { sync: false });
    expect(disk.unsynced).toBe(2);
    expect(log.lastSeq).toBe(3);
    disk.crash({ keepUnsynced: 1 });
    const again = await EventLog.openOn(new MemoryKv(disk), { fsync: 'always', logger: silent, clock });
    expect(await texts(again)).toEqual(['start', 'a']);
    expect(Buffer.from((await again.getMeta('position')) ?? []).toString()).toBe('2');
  });

  it('become durable by the next synced append', async () => {
    const disk = new MemoryDisk(systemClock);
    const { clock } = heldTimers();
    const log = await opened(disk, clock);
    await log.append([rec('a')], [], { sync: false });
    await log.append([rec('b')], [], { sync: true });
    expect(disk.unsynced).toBe(0);
    disk.crash({ keepUnsynced: 0 });
    const again = await EventLog.openOn(new MemoryKv(disk), { fsync: 'always', logger: silent, clock });
    expect(await texts(again)).toEqual(['start', 'a', 'b']);
  });

  it('are synced by one timer armed at the first of them, and by sync()', async () => {
    const disk = new MemoryDisk(systemClock);
    const { clock, due } = heldTimers();
    const log = await opened(disk, clock);
    expect(due).toHaveLength(0);
    await log.append([rec('a')], [], { sync: false });
    await log.append([rec('b')], [], { sync: false });
    expect(due.map((t) => t.ms)).toEqual([UNSYNCED_SYNC_MS]);
    due.shift()?.fn(); // the timer fires
    await log.sync(); // waits for the timer's sync under way
    expect(disk.unsynced).toBe(0);
    await log.append([rec('c')], [], { sync: false });
    expect(disk.unsynced).toBe(1);
    expect(due).toHaveLength(1); // armed again
    await log.sync();
    expect(disk.unsynced).toBe(0);
    await log.close();
  });

  it('are synced as the policy says when sync is not false', async () => {
    const disk = new MemoryDisk(systemClock);
    const { clock, due } = heldTimers();
    const log = await opened(disk, clock);
    await log.append([rec('a')]);
    expect(disk.unsynced).toBe(0);
    expect(due).toHaveLength(0);
  });
});
