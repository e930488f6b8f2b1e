import { describe, expect, it } from 'vitest';
import { safeUintToNumber } from '../../../src/executor/bigint-id.js';

describe('safeUintToNumber', () => {
  it('equals Number(v) across both 32-bit halves up to 2^53 − 1', () => {
    for (const v of [0n, 1n, 2n ** 31n, 2n ** 32n - 1n, 2n ** 32n, 123456789012345n, 2n ** 53n - 1n]) {
      expect(safeUintToNumber(v)).toBe(Number(v));
    }
  });
});
