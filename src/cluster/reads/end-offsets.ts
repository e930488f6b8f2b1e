// Read-committed end offsets of the cluster's topics. kafkajs's admin sends ListOffsets without
// an isolation level of its own, and its request builder defaults to READ_COMMITTED (protocol
// v2+), so the broker answers the last stable offset: the end of what a read-committed
// consumer can reach. A write acknowledged (its transaction committed) before the call is below
// it; records of a transaction still open are not, so a wait for this offset never waits on them.
import type { Admin, Kafka } from 'kafkajs';

//
// Concurrent readers share fetches: a caller needs ends read after it asked (a write
// acknowledged before its query started must be below them), so it joins the next fetch to
// start, never one already under way. Under load one ListOffsets cycle serves every query that
// arrived while the previous one ran.
export class EndOffsets {
  private admin: Promise<Admin> | undefined;
  private readonly running = new Map<string, Promise<Map<number, string>>>();
  private readonly queued = new Map<string, Promise<Map<number, string>>>();

  constructor(private readonly kafka: Kafka) {}

  /** partition → end offset of `topic`, read after this call. */
  of(topic: string): Promise<Map<number, string>> {
    const running = this.running.get(topic);
    if (running === undefined) {
      const fetch = this.fetch(topic).finally(() => this.running.delete(topic));
      this.running.set(topic, fetch);
      return fetch;
    }
    let next = this.queued.get(topic);
    if (next === undefined) {
      next = running
        .catch(() => undefined)
        .then(() => {
          this.queued.delete(topic);
          return this.of(topic);
        });
      this.queued.set(topic, next);
    }
    return next;
  }

  private async fetch(topic: string): Promise<Map<number, string>> {
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
