// The cluster's two topics: NAME.meta (one partition: everything global, totally ordered) and
// NAME.log (P partitions of bit and value commands). The first node creates them; retention is
// unlimited because a new holder restores a partition from the topic. P is fixed at creation
// (shard → partition depends on it): a node started with another P refuses to start.
import type { Admin, Kafka } from 'kafkajs';
import { StartupError } from '../../engine/bootstrap.js';

export interface ClusterTopics {
  meta: string;
  log: string;
  /** The smaller of the two topics' max.message.bytes: commands above it are sent in chunks. */
  maxMessageBytes: number;
}

export const clusterTopics = (name: string): Omit<ClusterTopics, 'maxMessageBytes'> => ({
  meta: `${name}.meta`,
  log: `${name}.log`,
});

/**
 * Messages up to 16 MiB: an import of one shard is usually one message, sent without a
 * transaction, where Kafka's 1 MiB default would cut it into chunks that need one.
 */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

const CONFIG = [
  { name: 'retention.ms', value: '-1' },
  { name: 'retention.bytes', value: '-1' },
  { name: 'max.message.bytes', value: String(MAX_MESSAGE_BYTES) },
  // A record batch must also fit in one log segment (brokers set up for tests use small ones).
  { name: 'segment.bytes', value: String(4 * MAX_MESSAGE_BYTES) },
];

/** kafkajs's ConfigResourceTypes.TOPIC (a number, so that no kafkajs value is imported here). */
const TOPIC_RESOURCE = 2;

/**
 * The largest record batch a topic takes: the smaller of its max.message.bytes and its
 * segment.bytes (a topic created elsewhere may have either small; Kafka's 1 MiB when unknown).
 */
async function maxMessageBytes(admin: Admin, topic: string): Promise<number> {
  const names = ['max.message.bytes', 'segment.bytes'];
  const res = await admin.describeConfigs({
    resources: [{ type: TOPIC_RESOURCE, name: topic, configNames: names }],
    includeSynonyms: false,
  });
  const values = names.map((n) => Number(res.resources[0]?.configEntries.find((e) => e.configName === n)?.configValue));
  const known = values.filter((v) => Number.isFinite(v) && v > 0);
  return known.length === 0 ? 1024 * 1024 : Math.min(...known);
}

/** Creates what is missing; checks NAME.log's partition count against `partitions`. */
export async function ensureClusterTopics(kafka: Kafka, name: string, partitions: number): Promise<ClusterTopics> {
  const topics = clusterTopics(name);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const brokers = (await admin.describeCluster()).brokers.length;
    const replicationFactor = Math.max(1, Math.min(3, brokers));
    await create(admin, topics.meta, 1, replicationFactor);
    await create(admin, topics.log, partitions, replicationFactor);
    const found = await whenKnown(admin, [topics.meta, topics.log]);
    const partitionsOf = (topic: string): number => found.find((t) => t.name === topic)?.partitions.length ?? 0;
    const meta = { partitions: { length: partitionsOf(topics.meta) } };
    const log = { partitions: { length: partitionsOf(topics.log) } };
    if (meta.partitions.length !== 1)
      throw new StartupError(
        `Kafka topic ${topics.meta} has ${meta.partitions.length} partitions; cluster mode needs exactly 1`,
      );
    if (log.partitions.length !== partitions)
      throw new StartupError(
        `cluster ${name} has ${log.partitions.length} partitions (Kafka topic ${topics.log}), this node was started with --cluster-partitions ${partitions}: start it with --cluster-partitions ${log.partitions.length}`,
      );
    const max = Math.min(await maxMessageBytes(admin, topics.meta), await maxMessageBytes(admin, topics.log));
    return { ...topics, maxMessageBytes: max };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

async function create(admin: Admin, topic: string, numPartitions: number, replicationFactor: number): Promise<void> {
  if ((await admin.listTopics()).includes(topic)) return;
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions, replicationFactor, configEntries: CONFIG }],
      waitForLeaders: true,
    });
  } catch (err) {
    // Another node created it in between (the partition count is checked by the caller), or
    // this one did and the broker answered the wait for leaders before it knew the topic.
    if (!isPropagating(err) && !(await admin.listTopics()).includes(topic)) throw err;
  }
}

/** Metadata errors of a topic just created that the brokers do not all know yet. */
const PROPAGATING = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE']);

function isPropagating(err: unknown): boolean {
  return err instanceof Error && PROPAGATING.has(String((err as Error & { type?: unknown }).type));
}

/** Attempts 200 ms apart: a loaded broker took seconds to serve a new topic's metadata. */
const METADATA_ATTEMPTS = 150;

/**
 * The topics' metadata once the broker serves it with a leader for every partition: just after
 * their creation a broker may answer "does not host this topic-partition" for a while.
 */
async function whenKnown(admin: Admin, topics: string[]): Promise<{ name: string; partitions: unknown[] }[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      const found = (await admin.fetchTopicMetadata({ topics })).topics;
      const led = found.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
      if (led || attempt >= METADATA_ATTEMPTS) return found;
    } catch (err) {
      if (!isPropagating(err) || attempt >= METADATA_ATTEMPTS) throw err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
