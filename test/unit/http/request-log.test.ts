// req.log without a pino child per request (src/http/request-log.ts): lines carry the request's
// bindings beside the server logger's own, at the server logger's level.
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { RequestLog, requestLogs } from '../../../src/http/request-log.js';

function memoryLogger(level: string): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, stream).child({ mod: 'http' }), lines };
}

describe('RequestLog', () => {
  it("writes the request's bindings and the server logger's, at the server logger's level", () => {
    const { logger, lines } = memoryLogger('info');
    const log = requestLogs(logger)(logger, { reqId: 'r-1' }, {});
    expect(log.level).toBe('info');
    log.debug('not written');
    log.info({ index: 'i' }, 'query cancelled');
    log.error(new Error('boom'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ reqId: 'r-1', mod: 'http', index: 'i', msg: 'query cancelled', level: 30 });
    expect(lines[1]).toMatchObject({ reqId: 'r-1', level: 50, msg: 'boom' });
  });

  it('takes a route level (fastify passes it as a child option) and makes children of its own', () => {
    const { logger, lines } = memoryLogger('info');
    const log = new RequestLog(logger, { reqId: 'r-2' }, { level: 'warn' });
    expect(log.level).toBe('warn');
    log.info('not written');
    log.child({ part: 'x' }).warn('written');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId: 'r-2', part: 'x', msg: 'written' });
  });
});
