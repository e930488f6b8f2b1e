import { defineConfig } from 'vitest/config';

// Integration and crash tests start real servers, LevelDB and Kafka: give them room,
// and run files in separate forks so a crash test cannot disturb its neighbours.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
    // One real Kafka broker for the whole run (KAFKA_BROKERS, testcontainers, or the ops/kafka launcher).
    globalSetup: ['./test/helpers/kafka-global-setup.ts'],
    // kafkajs with its aborted-transaction filter corrected, before any test file loads it.
    setupFiles: ['./test/helpers/kafkajs-setup.ts'],
  },
});
