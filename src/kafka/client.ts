// The kafkajs client as the rest of src/kafka sees it: one factory (pino-backed logging, bounded
// connection timeouts) and the few admin steps every part needs. kafkajs itself is imported
// only when a client is made: a server without Kafka starts without loading it.
import type { Admin, Kafka, LogEntry } from 'kafkajs';
import type { Logger } from 'pino';
import { type KafkaJs, kafkajs } from './kafkajs.js';

/** kafkajs log levels → pino. Connection errors during a broker outage are expected: warn. */
function pinoLogCreator(logger: Logger, logLevel: KafkaJs['logLevel']): () => (entry: LogEntry) => void {
  return () => (entry: LogEntry) => {
    const { message, ...extra } = entry.log;
    const fields = { ns: entry.namespace, ...extra };
    if (entry.level === logLevel.ERROR || entry.level === logLevel.WARN) logger.warn(fields, `kafkajs: ${message}`);
    else if (entry.level === logLevel.INFO) logger.debug(fields, `kafkajs: ${message}`);
    else logger.trace(fields, `kafkajs: ${message}`);
  };
}

export async function createKafka(brokers: string[], clientId: string, logger: Logger): Promise<Kafka> {
  const { Kafka, logLevel } = kafkajs();
  return new Kafka({
    clientId,
    brokers,
    // kafkajs filters by its own level before calling the creator; pino filters again.
    logLevel: logger.isLevelEnabled('debug') ? logLevel.INFO : logLevel.WARN,
    logCreator: pinoLogCreator(logger, logLevel),
    connectionTimeout: 3_000,
    requestTimeout: 30_000,
    // Our loops retry forever with their own backoff; kafkajs gives up early and reports.
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 5_000 },
  });
}

/** Creates `topic` when it does not exist (an existing topic is left as it is); true if created. */
export async function ensureTopic(
  kafka: Kafka,
  topic: string,
  numPartitions = 1,
  configEntries?: { name: string; value: string }[],
): Promise<boolean> {
  const admin: Admin = kafka.admin();
  await admin.connect();
  try {
    const existing = await admin.listTopics();
    if (existing.includes(topic)) return false;
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions, configEntries }], waitForLeaders: true });
      return true;
    } catch (err) {
      // Someone else created it in between: fine.
      if (!(await admin.listTopics()).includes(topic)) throw err;
      return false;
    }
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Exponential backoff for the retry-forever loops: 200 ms doubling to 3.2 s. */
export function backoffMs(attempt: number): number {
  return 200 * 2 ** Math.min(attempt, 4);
}

/** A sleep that a stop() can cut short. */
export class Sleeper {
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, ms);
    });
  }

  interrupt(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.wake?.();
    this.timer = undefined;
    this.wake = undefined;
  }
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
