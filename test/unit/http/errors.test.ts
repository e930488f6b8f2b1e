// internalError: the one place both answer paths (fastify's error handler, the lean query path)
// turn a bug into its log line, the stop for a broken invariant, and the 500 body.
import { describe, expect, it } from 'vitest';
import { internalError } from '../../../src/http/errors.js';
import { AssertionError } from '../../../src/util/assert.js';

function recorder() {
  const logged: [object, string][] = [];
  const broken: Error[] = [];
  return {
    logged,
    broken,
    log: { error: (o: object, m: string) => logged.push([o, m]) },
    stop: (e: Error) => broken.push(e),
  };
}

describe('internalError', () => {
  it('logs the error with the request id given, and answers the 500 body in the route shape', () => {
    const r = recorder();
    const err = new Error('boom');
    expect(internalError(err, r.log, r.stop, 'query', 'abc-1')).toBe('{"error":"internal error: boom"}\n');
    expect(r.logged).toEqual([[{ err, reqId: 'abc-1' }, 'internal error']]);
    expect(r.broken).toEqual([]);
    expect(JSON.parse(internalError(err, r.log, r.stop, 'admin'))).toEqual({
      success: false,
      error: { message: 'internal error: boom' },
    });
    expect(r.logged[1]).toEqual([{ err }, 'internal error']);
  });

  it('stops the process for a broken invariant only', () => {
    const r = recorder();
    const broken = new AssertionError('invariant');
    internalError(broken, r.log, r.stop, 'query');
    internalError(new TypeError('x'), r.log, r.stop, 'query');
    expect(r.broken).toEqual([broken]);
  });
});
