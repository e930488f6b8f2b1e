// Every node applies all of NAME.meta (schema, keys, attributes: everything global), in order,
// from its own stored position. Nothing is committed to Kafka, so a fresh group per run costs
// nothing and a restarted node never waits for its predecessor's session to expire.
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { ConsumerLoop } from '../../kafka/consumer-loop.js';
import { Feed } from './feed.js';
import type { Positions } from './positions.js';
import type { CommandSink } from '../types.js';

/** The meta consumer's long poll: a schema change answers it at once, an idle node asks once a second. */
const META_MAX_WAIT_MS = 1_000;
export class MetaFollower {
  private loop: ConsumerLoop | undefined;
  private readonly feed: Feed;
  lastError: string | undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly name: string,
    private readonly topic: string,
    sink: CommandSink,
    private readonly positions: Positions,
    private readonly logger: Logger,
  ) {
    this.feed = new Feed('meta', sink, positions);
  }

  start(): void {
    this.loop = new ConsumerLoop({
      kafka: this.kafka,
      groupId: `bitledger-${this.name}-meta-${randomUUID()}`,
      topic: this.topic,
      logger: this.logger,
      onAssigned: (partitions, seek) => {
        if (partitions.includes(0)) seek(0, String(this.positions.get('meta', 0)));
      },
      eachBatch: (p) => this.feed.eachBatch(p),
      onFilteredBatch: (p, last) => this.feed.filtered(p, last),
      // Nothing pauses, resumes or seeks this consumer after its start (one partition, every node
      // reads all of it): an idle node's meta fetches were 10 a second at 100 ms, for nothing.
      maxWaitMs: META_MAX_WAIT_MS,
      onError: (msg) => {
        this.lastError = msg;
      },
    });
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }
}
