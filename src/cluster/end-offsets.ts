// Read-committed end offsets of the cluster's topics. kafkajs's admin sends ListOffsets without
// an isolation level of its own, and its request builder defaults to READ_COMMITTED (protocol
// v2+), so the broker answers the last stable offset: the end of what a read-committed
// consumer can reach. A write acknowledged (its transaction committed) before the call is below
// it; records of a transaction still open are not, so a wait for this offset never waits on them.
import type { Admin, Kafka } from 'kafkajs';

export class EndOffsets {
  private admin: Promise<Admin> | undefined;

  constructor(private readonly kafka: Kafka) {}

  /** partition → end offset of `topic`. */
  async of(topic: string): Promise<Map<number, string>> {
    const admin = await this.connect();
    try {
      const offsets = await admin.fetchTopicOffsets(topic);
      return new Map(offsets.map((o) => [o.partition, o.offset]));
    } catch (err) {
      // A broken connection is rebuilt on the next call.
      this.admin = undefined;
      await admin.disconnect().catch(() => undefined);
      throw err;
    }
  }

  async close(): Promise<void> {
    const a = this.admin;
    this.admin = undefined;
    if (a !== undefined) await (await a.catch(() => undefined))?.disconnect().catch(() => undefined);
  }

  private connect(): Promise<Admin> {
    if (this.admin === undefined) {
      const admin = this.kafka.admin();
      this.admin = admin.connect().then(
        () => admin,
        (err: unknown) => {
          this.admin = undefined;
          throw err;
        },
      );
    }
    return this.admin;
  }
}
