// The import path's warm-up (http/import-warmup.ts) runs the real decode, validation, bucketing
// and encoding on its synthetic import: every bit comes back out of the records it encoded, in
// every round, and it touches no engine (it has none). Its speed-up is the cluster bench's (cold
// imports), never asserted here.
import { describe, expect, it } from 'vitest';
import { warmImportPath } from '../../../src/http/import-warmup.js';
import { runSteps } from '../../../src/util/steps.js';

describe('the import path warm-up', () => {
  it('builds and decodes every bit of its synthetic import in each of its rounds', () => {
    // 60,000 bits a round, four rounds; a column repeated in a row would count once.
    expect(runSteps(warmImportPath())).toBe(4 * 60_000);
  });
});
