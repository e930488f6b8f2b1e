// Shared by the Kafka tests (not a test file itself): HTTP shortcuts for in-process and child
// servers, polling, producing/consuming with kafkajs, and a private broker (ops/kafka launcher)
// for tests that must stop and start a broker without disturbing the run's shared one.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll } from 'vitest';
import type { Server } from '../../src/app.js';
import type { Config } from '../../src/config/config.js';
import { kafkaBrokersForTest, type KafkaHandle } from '../helpers/kafka-broker.js';
import { freePort, tempDir, removeDir, startServer, type TestServer } from '../helpers/server.js';

/**
 * The run's broker and the in-process servers a test file starts: registered in the file's
 * beforeAll/afterAll, so every server is closed and its data directory removed.
 */
export function kafkaServerPool(): {
  readonly brokers: string[];
  servers: TestServer[];
  start(overrides?: Partial<Config>): Promise<TestServer>;
} {
  let kafka: KafkaHandle | undefined;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    kafka = await kafkaBrokersForTest();
  });
  afterAll(async () => {
    for (const s of servers) {
      await s.close().catch(() => undefined);
      removeDir(s.dataDir);
    }
    await kafka?.release();
  });
  const brokers = (): string[] => {
    if (kafka === undefined) throw new Error('the Kafka broker is not acquired yet (use the pool inside tests)');
    return kafka.brokers;
  };
  return {
    get brokers() {
      return brokers();
    },
    servers,
    async start(overrides: Partial<Config> = {}) {
      const s = await startServer({ kafkaBrokers: brokers(), ...overrides });
      servers.push(s);
      return s;
    },
  };
}

export interface Reply {
  status: number;
  body: string;
  json: <T = unknown>() => T;
}

/** One HTTP request to an in-process server (fastify inject) or a URL (a child server). */
export async function http(
  target: Server | string,
  method: string,
  url: string,
  body?: string | object,
): Promise<Reply> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  let status: number;
  let text: string;
  if (typeof target === 'string') {
    const r = await fetch(`${target}${url}`, { method, body: payload });
    status = r.status;
    text = await r.text();
  } else {
    const r = await target.app.inject({ method: method as 'GET', url, payload });
    status = r.statusCode;
    text = r.body;
  }
  return { status, body: text, json: <T>() => JSON.parse(text) as T };
}

/** Like http() but fails the test on a non-2xx answer. */
export async function ok(target: Server | string, method: string, url: string, body?: string | object): Promise<Reply> {
  const r = await http(target, method, url, body);
  if (r.status < 200 || r.status >= 300) throw new Error(`${method} ${url} → ${r.status}: ${r.body}`);
  return r;
}

export async function waitFor(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const uniqueTopic = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

export function kafkaClient(brokers: string[]): Kafka {
  return new Kafka({ clientId: 'bitledger-test', brokers, logLevel: logLevel.NOTHING, retry: { retries: 3 } });
}

export async function createTopic(brokers: string[], topic: string, numPartitions = 1): Promise<void> {
  const admin = kafkaClient(brokers).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Produces JSON (or raw string) values in sends of 5000, spread round-robin over `partitions`,
 * or all to `onlyPartition`.
 */
export async function produce(
  brokers: string[],
  topic: string,
  values: (string | object)[],
  partitions = 1,
  onlyPartition?: number,
): Promise<void> {
  const producer = kafkaClient(brokers).producer();
  await producer.connect();
  try {
    for (let i = 0; i < values.length; i += 5000) {
      const messages = values.slice(i, i + 5000).map((v, j) => ({
        partition: onlyPartition ?? (i + j) % partitions,
        value: typeof v === 'string' ? v : JSON.stringify(v),
      }));
      await producer.send({ topic, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
}

/** Reads a topic from the beginning until `count` messages arrived. */
export async function consume(
  brokers: string[],
  topic: string,
  count: number,
  timeoutMs = 30_000,
): Promise<KafkaMessage[]> {
  const consumer = kafkaClient(brokers).consumer({ groupId: `test-${randomUUID()}` });
  const got: KafkaMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`got ${got.length}/${count} messages from ${topic}`)), timeoutMs);
      void consumer
        .run({
          eachMessage: async ({ message }) => {
            got.push(message);
            if (got.length >= count) {
              clearTimeout(timer);
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    await consumer.disconnect();
  }
  return got;
}

const OPS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'ops', 'kafka');

function run(script: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [path.join(OPS, script), ...args],
      { env: { ...process.env, KAFKA_OWNER_PID: String(process.pid) }, timeout: 150_000 },
      (err, _out, stderr) => (err ? reject(new Error(`${script} failed: ${err.message}\n${stderr}`)) : resolve()),
    );
  });
}

/** A broker of this test file's own (ops/kafka launcher), which it may stop and start at will. */
export class PrivateBroker {
  private constructor(
    readonly port: number,
    private readonly runDir: string,
  ) {}

  get brokers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  static async start(): Promise<PrivateBroker> {
    const b = new PrivateBroker(await freePort(), tempDir('bitledger-kafka-private-'));
    await b.start();
    return b;
  }

  /** (Re)starts on the same port and run dir: topics and offsets survive a stop. */
  start(): Promise<void> {
    return run('start.sh', [String(this.port), this.runDir]);
  }

  stop(): Promise<void> {
    return run('stop.sh', [this.runDir]);
  }

  async release(): Promise<void> {
    await this.stop().catch(() => undefined);
    removeDir(this.runDir);
  }
}
