// POST /internal/cluster/partial: one node's part of a read fanned out by another node (see
// partial-runner.ts). Errors are JSON {"error": …} with the status of their DomainError: 400
// for a query the holder refuses (its deadline, the result bound), 503 when this node does not
// hold a partition (the coordinator then asks another holder).
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../engine/engine.js';
import { jsonBody } from '../../encoding/json-body.js';
// The coordinator hanging up (its deadline, its client gone) stops this node's wait and work.
import { clientGone } from '../../http/routes/query-routes.js';
import { PartialRunner, decodePartialRequest } from './partial-runner.js';
import type { ClusterView } from '../types.js';

export interface ClusterPartialDeps {
  engine: Engine;
  view: ClusterView;
}

export const PARTIAL_PATH = '/internal/cluster/partial';

export function clusterPartialRoutes(app: FastifyInstance, deps: ClusterPartialDeps): PartialRunner {
  const runner = new PartialRunner(deps.engine, deps.view);
  app.post(PARTIAL_PATH, { config: { errorShape: 'query' } }, async (req, reply) => {
    const body = decodePartialRequest(jsonBody(req.body));
    const answer = await runner.run(body, clientGone(reply));
    // Plain JSON: every number in a partial is exact (64-bit values travel as strings).
    return reply.code(200).type('application/json').send(JSON.stringify(answer));
  });
  return runner;
}
