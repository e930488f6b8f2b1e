// The mirror topic is the replicas' only source of history: a record the broker deletes by
// retention leaves a gap no replica can cross. So the mirror creates its topic with unlimited
// retention, and an existing topic with a finite one is reported at start.
import type { Kafka } from 'kafkajs';

export const UNLIMITED_RETENTION = [
  { name: 'retention.ms', value: '-1' },
  { name: 'retention.bytes', value: '-1' },
];

/** "retention.ms=604800000" and the like when the topic deletes old records; undefined when not. */
export async function finiteRetention(kafka: Kafka, topic: string): Promise<string | undefined> {
  // kafkajs is CommonJS: Node's ESM loader sees only some of its named exports, not this one
  // (imported here, not at the top: a server without Kafka does not load kafkajs at all).
  const { ConfigResourceTypes } = (await import('kafkajs')).default;
  const admin = kafka.admin();
  await admin.connect();
  try {
    const res = await admin.describeConfigs({
      resources: [
        { type: ConfigResourceTypes.TOPIC, name: topic, configNames: UNLIMITED_RETENTION.map((c) => c.name) },
      ],
      includeSynonyms: false,
    });
    const entries = res.resources[0]?.configEntries ?? [];
    const finite = entries.filter((e) => e.configValue !== '-1' && e.configValue !== null);
    // Deletion by time or size only matters under cleanup.policy=delete (compaction keeps keys, but the mirror's keys are unique anyway).
    return finite.length === 0 ? undefined : finite.map((e) => `${e.configName}=${e.configValue}`).join(', ');
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
