// Read-your-writes for schema and keys at every node: a request that validates against this
// node's schema (imports, schema changes, 0.x frame writes) first waits, bounded, until this node
// has applied every meta command acknowledged before it arrived — so a field created at another
// node a moment ago is found here. Reads wait in the fan-out, write queries in the query
// coordinator, key translation in its own service: those routes are not listed here.
import type { FastifyInstance } from 'fastify';
import type { ClusterWrites } from './cluster-writes.js';

/** Routes (as registered) whose POST, PATCH or DELETE validates against the schema first. */
const SCHEMA_BOUND = new Set([
  '/schema',
  '/index/:index',
  '/index/:index/field/:field',
  '/index/:index/field/:field/import',
  '/index/:index/field/:field/import-roaring/:shard',
  '/import',
  '/import-value',
  '/index/:index/time-quantum',
  '/index/:index/frame/:frame',
  '/index/:index/frame/:frame/time-quantum',
  '/index/:index/frame/:frame/field/:field',
]);

const WRITES = new Set(['POST', 'PATCH', 'DELETE']);

export function readYourWritesHook(app: FastifyInstance, writes: Pick<ClusterWrites, 'caughtUpMeta'>): void {
  app.addHook('preHandler', async (req) => {
    if (!WRITES.has(req.method) || !SCHEMA_BOUND.has(req.routeOptions.url ?? '')) return;
    await writes.caughtUpMeta();
  });
}
