// Read-your-writes for schema and keys at every node: a request that validates against this
// node's schema (imports, schema changes, 0.x frame writes) or reads it (the schema listings)
// first waits, bounded, until this node has applied every meta command acknowledged before it
// arrived — so a field created at another node a moment ago is found here. Reads wait in the fan-out, write queries in the query
// coordinator, key translation in its own service: those routes are not listed here.
import type { FastifyInstance, FastifyRequest } from 'fastify';
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

/** Routes whose GET lists the schema. */
const SCHEMA_READS = new Set(['/schema', '/index', '/index/:index', '/index/:index/frame/:frame/fields']);

export function readYourWritesHook(app: FastifyInstance, writes: Pick<ClusterWrites, 'caughtUpMeta' | 'stages'>): void {
  // Started as the request arrives, before its body is read: the wait (a refresh of the ends,
  // then this node's meta apply) runs while a large import body is still coming in, and the
  // request's arrival is the moment the guarantee is about. Awaited before the handler.
  const waits = new WeakMap<FastifyRequest, { wait: Promise<void>; arrived: number }>();
  const stages = writes.stages;
  app.addHook('onRequest', async (req) => {
    const url = req.routeOptions.url ?? '';
    const bound = WRITES.has(req.method) ? SCHEMA_BOUND.has(url) : req.method === 'GET' && SCHEMA_READS.has(url);
    if (!bound) return;
    const wait = writes.caughtUpMeta();
    // A request refused before its handler (auth, a bad body) never awaits it.
    wait.catch(() => undefined);
    waits.set(req, { wait, arrived: stages.now() });
  });
  app.addHook('preHandler', async (req) => {
    const w = waits.get(req);
    if (w === undefined) return;
    // The body read, then how much longer the wait kept the handler back (writeStages).
    const read = stages.now();
    stages.add('bodyRead', read - w.arrived);
    await w.wait;
    stages.add('metaWait', stages.now() - read);
  });
}
