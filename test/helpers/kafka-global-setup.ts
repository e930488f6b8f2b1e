// vitest globalSetup: one real Kafka broker for the whole test run (see kafka-broker.ts for how
// it is chosen). Test files read its address with kafkaBrokersForTest() / inject('kafkaBrokers').
//
// BITLEDGER_KAFKA_GLOBAL=0 skips it (e.g. a quick local unit-test run); Kafka test files then
// acquire a broker of their own. KAFKA_BROKERS=host:port,... uses an existing broker instead.
import type { TestProject } from 'vitest/node';
import { acquireKafka } from './kafka-broker.js';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.BITLEDGER_KAFKA_GLOBAL === '0' && process.env.CI !== 'true') {
    return async () => undefined;
  }
  const kafka = await acquireKafka();
  project.provide('kafkaBrokers', kafka.brokers);
  // Workers and child processes spawned by tests can also find the broker through the env.
  process.env.KAFKA_BROKERS = kafka.brokers.join(',');
  return async () => {
    await kafka.release();
  };
}
