// Cluster-wide /internal/shards/max: the highest shard per index over every member's local
// answer. A member that does not answer is fine as long as every log partition has a holder
// that did (its shards are counted there); otherwise 503, never a max that may be too low.
import { DomainError } from '../../domain/errors.js';
import type { Engine } from '../../engine/engine.js';
import { maxShards } from '../../executor/max-shards.js';
import type { ClusterView, Member } from '../types.js';

export type MaxShards = { [index: string]: number };

/** Standard views' maxima, and 0.x inverse views' (inverseEnabled frames; /slices/max?inverse). */
export interface BothMaxShards {
  standard: MaxShards;
  inverse: MaxShards;
}

/** The query argument that asks a node for its own answer only (the route must honour it). */
export const LOCAL_ARG = 'local';

export async function clusterMaxShards(
  view: ClusterView,
  localMax: () => Promise<BothMaxShards>,
  timeoutMs = 10_000,
): Promise<BothMaxShards> {
  const map = view.map();
  if (map === undefined) return localMax();
  const answers = await Promise.allSettled(
    map.members.map((m) => (m.id === view.self.id ? localMax() : remoteMax(view, m, timeoutMs))),
  );
  const answered = new Set<string>();
  const out: BothMaxShards = { standard: {}, inverse: {} };
  const fold = (into: MaxShards, from: MaxShards): void => {
    for (const [index, max] of Object.entries(from)) into[index] = Math.max(into[index] ?? 0, max);
  };
  answers.forEach((a, i) => {
    if (a.status !== 'fulfilled') return;
    answered.add(map.members[i].id);
    fold(out.standard, a.value.standard);
    fold(out.inverse, a.value.inverse);
  });
  for (let p = 0; p < map.holders.length; p++) {
    if (!map.holders[p].some((id) => answered.has(id)))
      throw new DomainError('unavailable', `cluster: no node holding log partition ${p} answered; try again`);
  }
  return out;
}

async function remoteMax(view: ClusterView, m: Member, timeoutMs: number): Promise<BothMaxShards> {
  const res = await view.memberFetch(`${m.url}/internal/shards/max?${LOCAL_ARG}=true`, {
    signal: AbortSignal.timeout(timeoutMs),
  });
  if (!res.ok) throw new Error(`${m.id}: HTTP ${res.status}`);
  const body: unknown = await res.json();
  const field = (k: string): unknown =>
    typeof body === 'object' && body !== null && k in body ? body[k as keyof typeof body] : undefined;
  const standard = field('standard');
  if (typeof standard !== 'object' || standard === null) throw new Error(`${m.id}: no "standard" in its answer`);
  // A member from before inverse maxima were exchanged answers none: it has no inverse views then.
  return { standard: numbers(standard), inverse: numbers(field('inverse')) };
}

function numbers(o: unknown): MaxShards {
  const out: MaxShards = {};
  if (typeof o !== 'object' || o === null) return out;
  for (const [k, v] of Object.entries(o)) if (typeof v === 'number') out[k] = v;
  return out;
}

/**
 * The maxima in cluster mode, given the request's query arguments: this node's own when asked with
 * ?local=true (by another member), else the cluster's. GET /internal/shards/max answers `standard`
 * (and `inverse` to a member); 0.x /slices/max both.
 */
export function shardsMaxAnswer(
  view: ClusterView,
  engine: Engine,
): (query: Record<string, string | undefined>) => Promise<BothMaxShards> {
  const local = (): Promise<BothMaxShards> =>
    engine.read((h) => ({ standard: maxShards(h), inverse: maxShards(h, true) }));
  return (query) => (query[LOCAL_ARG] === 'true' ? local() : clusterMaxShards(view, local));
}
