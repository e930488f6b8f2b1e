// Cluster-wide /internal/shards/max: the highest shard per index over every member's local
// answer. A member that does not answer is fine as long as every log partition has a holder
// that did (its shards are counted there); otherwise 503, never a max that may be too low.
import { DomainError } from '../../domain/errors.js';
import type { Engine } from '../../engine/engine.js';
import { maxShards } from '../../executor/max-shards.js';
import type { ClusterView, Member } from '../types.js';

export type MaxShards = { [index: string]: number };

/** The query argument that asks a node for its own answer only (the route must honour it). */
export const LOCAL_ARG = 'local';

export async function clusterMaxShards(
  view: ClusterView,
  localMax: () => Promise<MaxShards>,
  timeoutMs = 10_000,
): Promise<MaxShards> {
  const map = view.map();
  if (map === undefined) return localMax();
  const answers = await Promise.allSettled(
    map.members.map((m) => (m.id === view.self.id ? localMax() : remoteMax(view, m, timeoutMs))),
  );
  const answered = new Set<string>();
  const out: MaxShards = {};
  answers.forEach((a, i) => {
    if (a.status !== 'fulfilled') return;
    answered.add(map.members[i].id);
    for (const [index, max] of Object.entries(a.value)) out[index] = Math.max(out[index] ?? 0, max);
  });
  for (let p = 0; p < map.holders.length; p++) {
    if (!map.holders[p].some((id) => answered.has(id)))
      throw new DomainError('unavailable', `cluster: no node holding log partition ${p} answered; try again`);
  }
  return out;
}

async function remoteMax(view: ClusterView, m: Member, timeoutMs: number): Promise<MaxShards> {
  const res = await view.memberFetch(`${m.url}/internal/shards/max?${LOCAL_ARG}=true`, {
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`${m.id}: HTTP ${res.status}`);
  const body: unknown = await res.json();
  const standard = typeof body === 'object' && body !== null && 'standard' in body ? body.standard : undefined;
  if (typeof standard !== 'object' || standard === null) throw new Error(`${m.id}: no "standard" in its answer`);
  const out: MaxShards = {};
  for (const [k, v] of Object.entries(standard)) if (typeof v === 'number') out[k] = v;
  return out;
}

/**
 * What GET /internal/shards/max answers in cluster mode, given the request's query arguments:
 * this node's own answer when asked with ?local=true (by another member), else the cluster's.
 */
export function shardsMaxAnswer(
  view: ClusterView,
  engine: Engine,
): (query: Record<string, string | undefined>) => Promise<{ standard: MaxShards }> {
  const local = (): Promise<MaxShards> => engine.read(maxShards);
  return async (query) => ({
    standard: query[LOCAL_ARG] === 'true' ? await local() : await clusterMaxShards(view, local),
  });
}
