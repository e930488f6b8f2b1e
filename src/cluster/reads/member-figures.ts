// Per-node figures gathered across the cluster: int fields' bit depths, and TopN caches.
// Int fields' bit depths: A field's depth grows with the values written to
// it, and each node holds only some shards' values, so one node's depth can be lower than a
// single server's; listings (/schema, /index/i) show the largest depth any member has seen.
import type { FastifyInstance } from 'fastify';
import type { Engine } from '../../engine/engine.js';
import { type BitDepths, localBitDepths } from '../../encoding/schema-json.js';
import { sendJson } from '../../http/reply.js';
import type { ClusterView, Member } from '../types.js';

export const BIT_DEPTHS_PATH = '/internal/cluster/bit-depths';

/** GET /internal/cluster/bit-depths: this node's own depths. */
export function bitDepthRoutes(app: FastifyInstance, engine: Engine): void {
  app.get(BIT_DEPTHS_PATH, async (_req, reply) => sendJson(reply, await engine.read(localBitDepths)));
}

/**
 * The largest depth per field over this node and every member that answers within `timeoutMs`
 * (a member that does not answer is left out: its depth shows again once it answers).
 */
export async function clusterBitDepths(view: ClusterView, engine: Engine, timeoutMs = 5_000): Promise<BitDepths> {
  const out = new Map<string, number>(Object.entries(await engine.read(localBitDepths)));
  const others = (view.map()?.members ?? []).filter((m) => m.id !== view.self.id);
  const answers = await Promise.allSettled(others.map((m) => remote(view, m, timeoutMs)));
  for (const a of answers) {
    if (a.status !== 'fulfilled') continue;
    for (const [k, v] of Object.entries(a.value)) if (typeof v === 'number') out.set(k, Math.max(out.get(k) ?? 0, v));
  }
  return out;
}

async function remote(view: ClusterView, m: Member, timeoutMs: number): Promise<Record<string, unknown>> {
  const res = await view.memberFetch(`${m.url}${BIT_DEPTHS_PATH}`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!res.ok) throw new Error(`${m.id}: HTTP ${res.status}`);
  return (await res.json()) as Record<string, unknown>;
}

/** POST /recalculate-caches?local=true at every other member (one that does not answer is skipped). */
export async function recalculateAtMembers(view: ClusterView, timeoutMs = 10_000): Promise<void> {
  const others = (view.map()?.members ?? []).filter((m) => m.id !== view.self.id);
  await Promise.allSettled(
    others.map((m) =>
      view.memberFetch(`${m.url}/recalculate-caches?local=true`, {
        method: 'POST',
        signal: AbortSignal.timeout(timeoutMs),
      }),
    ),
  );
}
