// The allocator addon (src/native, built by `npm ci`): on this glibc machine it must load and act;
// a trimmer told of enough bulk writes trims once they go quiet, and not for a trickle.
import { describe, expect, it } from 'vitest';
import { HeapTrimmer, tuneAllocator } from '../../../src/util/heap-trim.js';
import { captureLogger } from '../storage/helpers.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('heap trim', () => {
  it('tunes glibc and trims after bulk writes go quiet, not after a trickle', async () => {
    expect(tuneAllocator()).toBe(true);
    const { logger } = captureLogger();
    const trimmer = new HeapTrimmer(logger);
    expect(trimmer.enabled).toBe(true);
    try {
      trimmer.note(1024); // a Set(): no trim
      await sleep(1300);
      expect(trimmer.figures.trims).toBe(0);
      trimmer.note(16 * 1024 * 1024);
      await sleep(500);
      expect(trimmer.figures.trims).toBe(0); // not before the writes have been quiet for 1 s
      for (let waited = 0; trimmer.figures.trims === 0 && waited < 5000; waited += 100) await sleep(100);
      expect(trimmer.figures.trims).toBe(1);
    } finally {
      trimmer.stop();
    }
  });
});
