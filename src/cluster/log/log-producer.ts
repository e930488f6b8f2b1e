// The producer's side of the cluster behind the log port (log-port.ts LogWriter): sends commands
// as ClusterProducer does to Kafka — a command that is one message to one partition as one
// idempotent append, anything larger (several partitions, or a command cut into chunks) as one
// transaction, so a read-committed reader sees all of it or none — to any LogWriter, such as the
// in-memory log. The write coordinators (coordination/cluster-writes.ts) take either.
import { commandMessages } from '../commands/command-codec.js';
import type { Outgoing, Produced } from '../commands/producer.js';
import type { LogWriter } from './log-port.js';

export class LogProducer {
  constructor(
    private readonly log: LogWriter,
    /** Chunk size of large commands (tests make it small). */
    private readonly chunkBytes?: number,
  ) {}

  /** Sends the commands (in order per partition); resolves once the log has all of them. */
  async send(items: readonly Outgoing[]): Promise<Produced[]> {
    const messages = items.map((it) => commandMessages(it.command, this.chunkBytes));
    if (items.length === 1 && messages[0].length === 1) {
      const { topic, partition } = items[0];
      return [{ topic, partition, offset: this.log.append(topic, partition, messages[0]) }];
    }
    const tx = this.log.begin();
    try {
      const out = items.map((it, i) => ({
        topic: it.topic,
        partition: it.partition,
        offset: tx.send(it.topic, it.partition, messages[i]),
      }));
      tx.commit();
      return out;
    } catch (err) {
      tx.abort();
      throw err;
    }
  }
}
