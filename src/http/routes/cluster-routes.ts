// /status, /version, /info, /recalculate-caches: a one-node cluster that is its own coordinator.
import os from 'node:os';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { SHARD_WIDTH } from '../../domain/shard.js';
import type { HttpContext } from '../context.js';
import { sendJson } from '../reply.js';
import { selfNodeJson } from '../topology.js';

export function clusterRoutes(app: FastifyInstance, ctx: HttpContext): void {
  app.get('/status', async (_req, reply) =>
    sendJson(reply, {
      state: ctx.engine.state === 'NORMAL' ? 'NORMAL' : ctx.engine.state,
      nodes: [selfNodeJson(ctx.node()) as never],
      localID: ctx.node().id,
      ...(ctx.statusExtras() as Record<string, never>),
    }),
  );
  // Cluster mode: every member, as in /status.
  app.get('/internal/nodes', async (_req, reply) => sendJson(reply, ctx.topology.nodes() as never));
  app.get('/version', async (_req, reply) => sendJson(reply, { version: ctx.version }));
  app.get('/info', async (_req, reply) => {
    const cpus = os.cpus();
    return sendJson(reply, {
      shardWidth: SHARD_WIDTH,
      memory: os.totalmem(),
      cpuType: cpus[0]?.model ?? 'unknown',
      cpuPhysicalCores: physicalCores(cpus.length),
      cpuLogicalCores: cpus.length,
      cpuMHz: cpuMHz(cpus[0]?.speed ?? 0),
    });
  });
  app.post('/recalculate-caches', async (req, reply) => {
    ctx.recalculateCaches();
    // Cluster mode: every member recalculates (TopN candidates come from each holder's cache);
    // a member asks the others with ?local=true.
    const local = (req.query as Record<string, string | undefined>).local === 'true';
    if (!local) await ctx.topology.recalculateElsewhere();
    return reply.code(204).send();
  });
}

/** os.cpus() reports speed 0 on some VMs; /proc/cpuinfo still knows. */
function cpuMHz(speed: number): number {
  if (speed > 0) return speed;
  try {
    const m = /cpu MHz\s*:\s*([\d.]+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return Math.round(Number(m[1]));
  } catch {
    // not Linux: fall through
  }
  return 1;
}

function physicalCores(logical: number): number {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const ids = new Set<string>();
    let phys = '';
    for (const line of info.split('\n')) {
      if (line.startsWith('physical id')) phys = line.split(':')[1].trim();
      if (line.startsWith('core id')) ids.add(`${phys}:${line.split(':')[1].trim()}`);
    }
    if (ids.size > 0) return ids.size;
  } catch {
    // not Linux
  }
  return logical;
}
