import { expect } from 'vitest';
import { DomainError } from '../../src/domain/errors.js';

/** `f` must throw a bad_request DomainError whose message matches `pattern`. */
export function expectBadRequest(f: () => unknown, pattern: RegExp | string): void {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe('bad_request');
    expect((e as DomainError).message).toMatch(pattern);
    return;
  }
  throw new Error('expected a bad_request DomainError');
}
