// POST /internal/cluster/partial: one node's part of a read fanned out by another node (see
// partial-runner.ts). Errors are JSON {"error": …} with the status of their DomainError: 400
// for a query the holder refuses (its deadline, the result bound), 503 when this node does not
// hold a partition (the coordinator then asks another holder).
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { FRAMES_ANSWER, FRAMES_TYPE, encodeFrames } from '../../executor/partial-frames.js';
import type { Engine } from '../../engine/engine.js';
import { badRequest } from '../../domain/errors.js';
// The coordinator hanging up (its deadline, its client gone) stops this node's wait and work.
import { ClientGone } from '../../http/routes/query-routes.js';
import { PartialRunner, decodePartialRequest, encodeResponse } from './partial-runner.js';
import type { ClusterView } from '../types.js';

export interface ClusterPartialDeps {
  engine: Engine;
  view: ClusterView;
}

export const PARTIAL_PATH = '/internal/cluster/partial';

export function clusterPartialRoutes(app: FastifyInstance, deps: ClusterPartialDeps): PartialRunner {
  const runner = new PartialRunner(deps.engine, deps.view);
  app.post(PARTIAL_PATH, { config: { errorShape: 'query' } }, async (req, reply) => {
    const body = decodePartialRequest(partialBody(req.body));
    const answer = await runner.run(body, new ClientGone(reply.raw));
    // Partials in binary, streamed a piece at a time, when the coordinator reads that form.
    if (body.answer === FRAMES_ANSWER && 'partials' in answer)
      return reply
        .code(200)
        .type(FRAMES_TYPE)
        .send(Readable.from(slowly(encodeFrames(answer.partials))));
    // Plain JSON: every number in a partial is exact (64-bit values travel as strings).
    return reply
      .code(200)
      .type('application/json')
      .send(JSON.stringify(encodeResponse(answer)));
  });
  return runner;
}

/**
 * The request's JSON. JSON.parse, not the routes' jsonBody (which first scans the text for
 * integers past 2^53 to keep them exact, about 20 µs of a partial's ~600 bytes here): every
 * 64-bit value of a partial request travels as a string (query-wire.ts, partial-wire.ts), and
 * its numbers (times, partitions, bounds) are checked to be safe integers or finite.
 */
function partialBody(body: unknown): unknown {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : '';
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`invalid JSON body: ${(err as Error).message}`);
  }
}

/**
 * The pieces with a turn of the event loop after each: a socket that takes every write at once
 * would otherwise be fed the whole answer from the microtask queue (issue 23's sliced writer).
 * Readable.from pulls the next piece only when the socket wants more (backpressure).
 */
async function* slowly(pieces: Iterable<Uint8Array>): AsyncGenerator<Uint8Array, void, undefined> {
  for (const p of pieces) {
    yield p;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
