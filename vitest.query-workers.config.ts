// The query tests a second time, with two query workers (issue 25: every query test passes with
// --query-workers 1 and with 2 or more); `npm test` runs it after the whole suite. Test servers
// run on the request thread alone unless BITLEDGER_QUERY_WORKERS says otherwise
// (test/helpers/server.ts); with it they wait for their workers and spread one-shard queries
// too. The executor's unit tests run their reads through the workers' jobs on their own thread
// (test/helpers/worker-jobs.ts: publication, mirror, two shares, merge; no thread hop). About
// 60 s on this machine.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The base's settings with this include list instead of its own (mergeConfig would append).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'test/integration/query-http.test.ts',
      'test/integration/query-bounds.test.ts',
      'test/integration/large-row-ids.test.ts',
      'test/integration/ids64.test.ts',
      'test/integration/error-texts.test.ts',
      'test/integration/argument-range.test.ts',
      'test/property/ids64.test.ts',
      'test/unit/executor/*.test.ts',
    ],
    env: { BITLEDGER_QUERY_WORKERS: '2' },
  },
});
