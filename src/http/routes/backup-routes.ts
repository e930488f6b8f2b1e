// Online backup: a snapshot body and the log after it, streamed while writes go on. Retention
// is held at the streamed position for as long as a log stream runs.
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { DomainError, badRequest, notFound } from '../../domain/errors.js';
import { encodeSegmentBatch } from '../../engine/log-export.js';
import { parseUint } from '../body.js';
import type { HttpContext } from '../context.js';

export function backupRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.get<{ Params: { seq: string } }>('/internal/backup/snapshot/:seq', async (req, reply) => {
    const seq = parseUint(req.params.seq, 'seq');
    const info = (await ctx.engine.history.window()).snapshots.find((s) => s.seq === seq);
    if (info === undefined)
      throw notFound(`no snapshot at sequence ${seq} (it may have been pruned; ask /internal/history again)`);
    const body = await ctx.engine.history.snapshotBody(seq);
    reply.header('x-bl-seq', String(seq));
    if (info.timeMs !== undefined) reply.header('x-bl-time', String(info.timeMs));
    return reply
      .code(200)
      .type('application/octet-stream')
      .send(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  });

  // Records from..to (default: the durable end when asked) in segment encoding (src/engine/log-export.ts).
  app.get<{ Querystring: Record<string, string> }>('/internal/backup/log', async (req, reply) => {
    const { committedLog, history } = ctx.engine;
    const from = parseUint(req.query.from, 'from');
    const durable = committedLog.durableSeq;
    const to = req.query.to === undefined ? durable : parseUint(req.query.to, 'to');
    if (from < 1) throw badRequest('from must be at least 1');
    if (to > durable) throw badRequest(`to ${to} is past the durable log (last ${durable})`);
    let position = from;
    // Held before the range check, so the range cannot be released between check and read.
    const hold = committedLog.hold('backup', () => position);
    const release = (): void => hold.release();
    if (from < committedLog.firstRetainedSeq) {
      release();
      throw new DomainError(
        'conflict',
        `the log before sequence ${committedLog.firstRetainedSeq} was released; the server holds ${committedLog.firstRetainedSeq}..${durable}: start a new backup in a new directory`,
      );
    }
    async function* stream(): AsyncGenerator<Buffer> {
      try {
        for await (const b of history.batches(from, to)) {
          yield encodeSegmentBatch(b.records, b.timeMs);
          position = b.records[b.records.length - 1].seq + 1;
        }
      } finally {
        release();
      }
    }
    // A client gone before the stream started never runs its finally: the socket's close releases too.
    reply.raw.once('close', release);
    reply.header('x-bl-from', String(from)).header('x-bl-to', String(to));
    return reply.code(200).type('application/octet-stream').send(Readable.from(stream()));
  });
}
