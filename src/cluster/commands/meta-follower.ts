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
