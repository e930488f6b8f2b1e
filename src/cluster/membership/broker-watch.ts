// Whether this node reaches the cluster's Kafka broker now. Every read and write of a cluster
// node goes through Kafka (commands, end offsets); with the broker down they would wait out
// kafkajs's retries and fail with its texts. A cheap metadata request every 500 ms (a client of
// its own: one try, 1 s timeouts) marks the broker unreachable when a connection is refused or
// two probes in a row fail (one slow answer on a busy node is not an outage), and reachable
// again at its first success. Requests pass their Kafka steps through the watch
// (KafkaGate): refused at once while the mark is set, answered the moment it is set while they
// wait, and a Kafka failure of theirs becomes one sentence of ours — never the library's text,
// which goes to the log.
import type { Admin, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { DomainError } from '../../domain/errors.js';
import { errorText } from '../../kafka/client.js';
import { type Clock, type ClockTimer, every } from '../../util/clock.js';
import type { KafkaGate } from '../types.js';

/**
 * How often the broker is asked: a stopped broker (refused) shows within this plus a connect, well
 * inside the 2 s a request may wait; 250 ms cost an idle node 4 metadata round trips a second.
 */
export const PROBE_EVERY_MS = 500;

/** Errors that say the broker is not there (not merely slow): one is enough. */
const REFUSED = /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENOTFOUND|EPIPE|Closed connection/i;
/** Probes in a row that must fail otherwise (timeouts) before the broker counts as unreachable. */
const FAILURES_TO_MARK = 2;

/** What a Kafka step that failed while the watch still saw the broker answers. */
const KAFKA_FAILED = 'cluster: Kafka did not answer this request (its broker is restarting or unreachable); try again';

export class BrokerWatch implements KafkaGate {
  private admin: Admin | undefined;
  private since: number | undefined;
  private timer: ClockTimer | undefined;
  private probing = false;
  private failures = 0;
  private readonly onDown = new Set<() => void>();

  constructor(
    /** A client for the probe alone (createKafka with probe timeouts). */
    private readonly kafka: Kafka,
    private readonly brokers: readonly string[],
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer ??= every(this.clock, PROBE_EVERY_MS, () => void this.probe(), { unref: true });
  }

  async stop(): Promise<void> {
    this.timer?.cancel();
    const a = this.admin;
    this.admin = undefined;
    await a?.disconnect().catch(() => undefined);
  }

  downSince(): number | undefined {
    return this.since;
  }

  /** /status's reason while the broker is unreachable; undefined while it answers. */
  reason(): string | undefined {
    if (this.since === undefined) return undefined;
    return `the Kafka broker (${this.brokers.join(',')}) has been unreachable since ${new Date(this.since).toISOString()}: reads and writes answer 503 until it answers`;
  }

  async through<T>(step: () => Promise<T>, failed?: string): Promise<T> {
    try {
      return await this.untilDown(step, failed);
    } catch (err) {
      if (err instanceof DomainError) throw err;
      this.logger.warn({ err: errorText(err) }, 'cluster: a Kafka step of a request failed');
      throw this.since !== undefined ? this.refusal(failed) : new DomainError('unavailable', failed ?? KAFKA_FAILED);
    }
  }

  async untilDown<T>(step: () => Promise<T>, failed?: string): Promise<T> {
    if (this.since !== undefined) throw this.refusal(failed);
    let off = (): void => undefined;
    const down = new Promise<never>((_, reject) => {
      const fail = (): void => reject(this.refusal(failed));
      this.onDown.add(fail);
      off = () => this.onDown.delete(fail);
    });
    try {
      return await Promise.race([step(), down]);
    } finally {
      off();
    }
  }

  private refusal(failed: string | undefined): DomainError {
    return failed === undefined ? this.unreachable() : new DomainError('unavailable', failed);
  }

  private unreachable(): DomainError {
    const at = this.since === undefined ? '' : ` since ${new Date(this.since).toISOString()}`;
    return new DomainError(
      'unavailable',
      `cluster: the Kafka broker is unreachable${at}, so this node can neither write nor read consistently; try again once it is back`,
    );
  }

  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      this.admin ??= await this.connect();
      await this.admin.describeCluster();
      if (this.since !== undefined) this.logger.info('cluster: the Kafka broker answers again');
      this.since = undefined;
      this.failures = 0;
    } catch (err) {
      const a = this.admin;
      this.admin = undefined;
      await a?.disconnect().catch(() => undefined);
      const cause = causeText(err);
      this.failures++;
      if (this.since === undefined && (REFUSED.test(cause) || this.failures >= FAILURES_TO_MARK)) this.markDown(cause);
    } finally {
      this.probing = false;
    }
  }

  private async connect(): Promise<Admin> {
    const admin = this.kafka.admin();
    await admin.connect();
    return admin;
  }

  private markDown(cause: string): void {
    this.since = this.clock.now();
    this.logger.warn({ cause }, 'cluster: the Kafka broker is unreachable');
    for (const fail of [...this.onDown]) fail();
  }
}

/** A gate that never closes (tests of one part without a watch). */
export const OPEN_GATE: KafkaGate = {
  downSince: () => undefined,
  through: (step) => step(),
  untilDown: (step) => step(),
};

/** The error and its causes (kafkajs wraps the socket's error), for the log and REFUSED. */
function causeText(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, i = 0; e !== undefined && e !== null && i < 4; i++) {
    parts.push(errorText(e));
    e = e instanceof Error ? (e.cause ?? (e as { originalError?: unknown }).originalError) : undefined;
  }
  return parts.join(': ');
}
