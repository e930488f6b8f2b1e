// `bitledger restore --cluster-name NAME --kafka-brokers B [--to-time T] [--from BACKUP] --data-dir
// NEW` (docs/CLUSTER.md, "Backup and restore"): the whole cluster's state as of T in a single-node
// data directory, built from the topics — NAME.meta first, then every partition of NAME.log —
// through the cluster's own command applier, each partition up to its first command stamped after
// T (as a time-travel read sees it). With a backup, each partition starts from the node snapshot
// that covers it furthest without passing T, and only the topics after it are read.
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { bootstrap } from '../../engine/bootstrap.js';
import { writeBase } from '../../engine/compose-base.js';
import { Engine } from '../../engine/engine.js';
import { createKafka } from '../../kafka/client.js';
import { ConsumerLoop } from '../../kafka/consumer-loop.js';
import { ImportService } from '../../service/import/import-service.js';
import { SchemaService } from '../../service/schema-service.js';
import { commandMarkKey } from '../../state/holder.js';
import { EventLog, SnapshotStore } from '../../storage/index.js';
import { systemClock } from '../../util/clock.js';
import { CommandApplier } from '../commands/applier.js';
import { Feed } from '../commands/feed.js';
import { decodeStoredPosition, positionFromText } from '../commands/position.js';
import { Positions } from '../commands/positions.js';
import { partitionOf } from '../membership/partition.js';
import { clusterTopics } from '../membership/topics.js';
import { type ClusterTopic, positionKey } from '../types.js';
import { type BackupSnapshot, planRestore } from './plan.js';

export class ClusterRestoreError extends Error {
  override name = 'ClusterRestoreError';
}

export interface ClusterRestoreOptions {
  name: string;
  brokers: string[];
  /** An empty directory (the caller checked). */
  dest: string;
  /** ms: the state as of then; undefined: everything the topics hold now. */
  until?: number;
  /** A backup's node snapshots to start from. */
  from?: readonly BackupSnapshot[];
  logger: Logger;
  out(line: string): void;
}

interface TopicEnds {
  partitions: number;
  /** Per topic: partition → [first offset held, read-committed end]. */
  meta: Map<number, [bigint, bigint]>;
  log: Map<number, [bigint, bigint]>;
}

export async function restoreCluster(o: ClusterRestoreOptions): Promise<{ commands: number }> {
  const kafka = await createKafka(o.brokers, `bitledger-restore-${o.name}`, o.logger);
  const ends = await topicEnds(kafka, o.name);
  const P = ends.partitions;
  const plan = planRestore(o.from ?? [], o.until, P, (index, shard) => partitionOf(index, shard, P));
  for (const line of plan.sources) o.out(`restore: ${line}`);
  checkHeld(o.name, ends, plan.positions);
  const log = await EventLog.open(o.dest, { fsync: 'interval', fsyncIntervalMs: 60_000, logger: o.logger });
  try {
    const snapshots = await SnapshotStore.open(o.dest, o.logger);
    if (plan.base !== undefined) await writeBase(snapshots, plan.base);
    const { holder } = await bootstrap(log, snapshots, o.logger);
    const engine = new Engine(
      holder,
      log,
      snapshots,
      { snapshotEveryEvents: 200_000, snapshotEveryBytes: 64 * 1024 * 1024 },
      o.logger,
      (err) => o.logger.error({ err: String(err) }, 'restore: storage failed'),
    );
    const cursors = [...plan.positions].map(([key, value]) => ({ key, value: positionFromText(value) }));
    if (cursors.length > 0) await engine.commit({ cursors, origin: 'cluster' });
    const applier = new CommandApplier(
      {
        engine,
        schema: new SchemaService(engine),
        imports: new ImportService(engine),
        partitionOf: (index, shard) => partitionOf(index, shard, P),
        logger: o.logger,
      },
      { ...(o.until !== undefined ? { until: o.until } : {}), metaWaitMs: 600_000, resultsKept: 1 },
    );
    const positions = await Positions.load(engine, P);
    const topics = clusterTopics(o.name);
    // NAME.meta first: every log command written at or before T needs only meta commands before it.
    await follow(kafka, topics.meta, 'meta', ends.meta, applier, positions, o);
    await follow(kafka, topics.log, 'log', ends.log, applier, positions, o);
    const applied = engine.peekApplied((h) => h.commandMarks.has(commandMarkKey('meta', 0)));
    if (!applied && o.until !== undefined)
      throw new ClusterRestoreError(
        `restore: no command of cluster ${o.name} is at or before ${new Date(o.until).toISOString()}: there is nothing to restore`,
      );
    await engine.snapshot();
    await engine.stop();
    return { commands: engine.logFigures().durableSeq };
  } finally {
    await log.close();
  }
}

async function topicEnds(kafka: Kafka, name: string): Promise<TopicEnds> {
  const topics = clusterTopics(name);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const have = await admin.listTopics();
    for (const t of [topics.meta, topics.log])
      if (!have.includes(t))
        throw new ClusterRestoreError(`restore: cluster ${name} has no topic ${t} on these brokers`);
    const read = async (topic: string): Promise<Map<number, [bigint, bigint]>> =>
      new Map(
        (await admin.fetchTopicOffsets(topic)).map((x) => [x.partition, [BigInt(x.low), BigInt(x.offset)]] as const),
      );
    const log = await read(topics.log);
    return { partitions: log.size, meta: await read(topics.meta), log };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Every partition must still hold the records after where the restore starts it. */
function checkHeld(name: string, ends: TopicEnds, positions: ReadonlyMap<string, string>): void {
  const check = (topic: ClusterTopic, held: Map<number, [bigint, bigint]>): void => {
    for (const [p, [low]] of held) {
      const start = positions.get(positionKey(topic, p));
      const from = start === undefined ? 0n : decodeStoredPosition(Buffer.from(start, 'utf8'), 'backup mark').next;
      if (from < low)
        throw new ClusterRestoreError(
          `restore: ${name}.${topic} partition ${p} starts at offset ${low} (older records were deleted by the topic's retention), and the restore needs it from ${from}: restore from a backup taken after offset ${low}`,
        );
    }
  };
  check('meta', ends.meta);
  check('log', ends.log);
}

/** Reads `topic` from the stored positions to the ends into the applier (closed partitions included). */
async function follow(
  kafka: Kafka,
  topic: string,
  which: ClusterTopic,
  held: Map<number, [bigint, bigint]>,
  applier: CommandApplier,
  positions: Positions,
  o: Pick<ClusterRestoreOptions, 'logger' | 'out'>,
): Promise<void> {
  const pending = (): number[] => [...held].filter(([p, [, end]]) => positions.get(which, p) < end).map(([p]) => p);
  if (pending().length === 0) return;
  const feed = new Feed(which, applier, positions);
  let failure: string | undefined;
  const loop = new ConsumerLoop({
    kafka,
    groupId: `bitledger-restore-${randomUUID()}`,
    topic,
    logger: o.logger,
    partitionsConsumedConcurrently: Math.max(1, held.size),
    onAssigned: (ps, seek) => {
      for (const p of ps) seek(p, String(positions.get(which, p)));
    },
    eachBatch: (p) => feed.eachBatch(p),
    onFilteredBatch: (p, last) => feed.filtered(p, last),
    onError: (msg) => {
      failure = msg;
    },
  });
  loop.start();
  let said = systemClock.monotonic();
  try {
    for (let left = pending(); left.length > 0; left = pending()) {
      if (systemClock.monotonic() - said > 2_000) {
        said = systemClock.monotonic();
        o.out(
          `restore: reading ${topic}, ${left.length} partition(s) to go${failure === undefined ? '' : ` (${failure})`}`,
        );
      }
      await systemClock.sleep(50);
    }
  } finally {
    await loop.stop();
  }
}
