// Route modules are fastify plugins (src/http/app.ts ROUTE_MODULES): each appears in fastify's
// plugin tree under its own name, a hook one adds stays inside its scope, and the 0.x variants
// reach other modules' routes only as options of those routes (src/http/route-options.ts).
// Kafka and the cluster contribute plugins of their own (src/server-http.ts); the routes that
// depend on where the data lives ask the topology (src/http/topology.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startServer, stopServer } from '../helpers/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ legacyRelease: '0.9' });
  await server.app.ready();
});
afterAll(() => stopServer(server));

describe('route modules as plugins', () => {
  it('registers every route module as a plugin of its own', () => {
    const tree = server.app.printPlugins();
    for (const name of [
      'schemaRoutes',
      'clusterRoutes',
      'queryRoutes',
      'importRoutes',
      'internalRoutes',
      'historyRoutes',
      'backupRoutes',
      'exportRoutes',
      'legacyFrameRoutes',
      'legacyInputRoutes',
      'legacyClusterRoutes',
      'legacyImportRoutes',
      'consoleRoutes',
    ])
      expect(tree, name).toContain(name);
  });

  it('registers what Kafka contributes as plugins, not as patches of the root', async () => {
    const tree = server.app.printPlugins();
    expect(tree).toContain('kafkaHooks');
    expect(tree).toContain('kafkaRoutes');
    const ingests = await server.app.inject({ method: 'GET', url: '/ingest' });
    expect(ingests.statusCode).toBe(200);
    expect(ingests.json()).toEqual({ ingests: [] });
  });

  it('gives the release variant as options of the routes it changes, not of the others', async () => {
    // A route the release lacks (0.9 has no input definitions): its option answers 404.
    const missing = await server.app.inject({ method: 'GET', url: '/index/i/input-definition/x' });
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toMatch(/release 0\.9 has no input-definitions endpoint/);
    // A mutating route answers {} as 0.x did; a read route of another module is untouched.
    const created = await server.app.inject({ method: 'POST', url: '/index/i', payload: '{}' });
    expect(created.statusCode).toBe(200);
    expect(created.body).toBe('{}\n');
    const listed = await server.app.inject({ method: 'GET', url: '/index' });
    expect(listed.json()).toEqual({ indexes: [{ name: 'i', frames: [] }] });
    const status = await server.app.inject({ method: 'GET', url: '/status' });
    expect(status.statusCode).toBe(200);
    expect(status.json().state).toBe('NORMAL');
  });

  it('answers the topology routes from the single-node topology (after the index above)', async () => {
    const nodes = await server.app.inject({ method: 'GET', url: '/internal/nodes' });
    expect(nodes.json()).toEqual([expect.objectContaining({ isCoordinator: true, state: 'READY' })]);
    const owners = await server.app.inject({ method: 'GET', url: '/internal/fragment/nodes?index=i&shard=3' });
    expect(owners.json()).toEqual(nodes.json());
    const max = await server.app.inject({ method: 'GET', url: '/slices/max' });
    expect(max.json()).toEqual({ standard: { i: 0 }, inverse: { i: 0 }, maxSlices: { i: 0 } });
  });
});
