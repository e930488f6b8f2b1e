// An old data directory, with its consumer positions in the forms written before the position
// record (src/storage/consumer-position.ts), loads: the Kafka mirror's cursor, a replica's
// position and the cluster partitions' positions are read from real LevelDB metadata after a
// restart, as this build reads them; the next write of each stores the record, which a second
// restart reads back.
import { Kafka } from 'kafkajs';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Positions } from '../../src/cluster/commands/positions.js';
import { encodePosition } from '../../src/cluster/commands/position.js';
import { positionKey } from '../../src/cluster/types.js';
import type { Engine } from '../../src/engine/engine.js';
import { testEngine } from '../helpers/test-engine.js';
import type { CursorWrite } from '../../src/engine/ports.js';
import { MirrorCursor } from '../../src/kafka/mirror-cursor.js';
import { Replica } from '../../src/kafka/replica.js';
import { Holder } from '../../src/state/holder.js';
import { EventLog, SnapshotStore } from '../../src/storage/index.js';
import { until } from '../helpers/until.js';
import { removeDir, tempDir } from '../helpers/temp.js';

const silent = pino({ level: 'silent' });
const dir = tempDir('bitledger-old-cursors-');
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

async function openEngine(): Promise<Engine> {
  const log = await EventLog.open(dir, { fsync: 'always', logger: silent });
  close = () => log.close();
  const snapshots = await SnapshotStore.open(dir, silent);
  const engine = testEngine(new Holder(), log, snapshots, silent);
  return engine;
}

const writeCursors = (engine: Engine, cursors: CursorWrite[]): Promise<void> =>
  engine.commit({ decide: () => undefined, cursors });

describe('consumer positions of an old data directory', () => {
  it('load after a restart, and are rewritten as records that load again', async () => {
    let engine = await openEngine();
    // Exactly the bytes the earlier builds wrote.
    await writeCursors(engine, [
      { key: 'kafka-mirror', value: Buffer.from(JSON.stringify({ topic: 'mirror-t', seq: 41 })) },
      { key: 'kafka-replica', value: Buffer.from(JSON.stringify({ topic: 'primary-t', offset: '76', seq: 12 })) },
      { key: positionKey('meta', 0), value: Buffer.from('9') },
      { key: positionKey('log', 0), value: Buffer.from('120;125,131') },
    ]);
    await close?.();

    engine = await openEngine();
    const ride = (c: readonly CursorWrite[]): Promise<void> => writeCursors(engine, [...c]);
    const mirror = await MirrorCursor.load(engine.cursors, ride, 'mirror-t');
    expect(mirror.stored).toBe(41);
    const kafka = new Kafka({ brokers: ['127.0.0.1:1'], logCreator: () => () => undefined });
    const replica = await Replica.open(engine, kafka, 'primary-t', silent, () => undefined);
    expect(replica.status().nextOffset).toBe('77');
    const positions = await Positions.load(engine, 2);
    expect(positions.get('meta', 0)).toBe(9n);
    expect(positions.get('log', 0)).toBe(120n);
    expect(positions.get('log', 1)).toBe(0n);

    // New writes store the record.
    mirror.advance(50);
    await until(() => mirror.stored === 50);
    await writeCursors(engine, [{ key: positionKey('log', 0), value: encodePosition(140n, [150n]) }]);
    const raw = await engine.cursors.get(positionKey('log', 0));
    expect(raw?.[0]).toBe(0xb7);
    await close?.();

    engine = await openEngine();
    expect((await MirrorCursor.load(engine.cursors, ride, 'mirror-t')).stored).toBe(50);
    expect((await Positions.load(engine, 1)).get('log', 0)).toBe(140n);
    await close?.();
    close = undefined;
    removeDir(dir);
  });
});
