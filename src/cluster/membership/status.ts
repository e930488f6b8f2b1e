// The cluster as Pilosa clients read it: /status's node list and cluster state, and the holders
// of one shard (/internal/fragment/nodes), in Pilosa 1.x's Node shape.
import type { ClusterRuntime } from './runtime.js';
import type { Member, PartitionMap } from '../types.js';

export interface PilosaNode {
  [k: string]: string | boolean | { [k: string]: string | number };
  id: string;
  uri: { scheme: string; host: string; port: number };
  isCoordinator: boolean;
  state: string;
}

/** NORMAL when every partition has a caught-up holder; STARTING before the first map. */
export function clusterState(rt: ClusterRuntime): 'STARTING' | 'NORMAL' | 'DEGRADED' {
  const m = rt.view.map();
  if (m === undefined) return 'STARTING';
  for (let p = 0; p < m.partitions; p++) if (caughtUpHolders(rt, m, p).length === 0) return 'DEGRADED';
  return 'NORMAL';
}

/** Holders of p that have its data now (this node by its own knowledge, others by the map). */
export function caughtUpHolders(rt: ClusterRuntime, m: PartitionMap, p: number): string[] {
  const restoring = new Set(m.restoring?.[p] ?? []);
  const self = rt.member.id;
  const mine = new Map(rt.held().map((h) => [h.partition, h.caughtUp]));
  return (m.holders[p] ?? []).filter((id) => (id === self ? mine.get(p) === true : !restoring.has(id)));
}

/** Every member, Pilosa-shaped; the coordinator flag marks one fixed member (the lowest id). */
export function statusNodes(rt: ClusterRuntime): PilosaNode[] {
  const m = rt.view.map();
  const members = m?.members ?? [];
  const list = members.some((x) => x.id === rt.member.id) ? members : [...members, rt.member];
  const first = [...list].map((x) => x.id).sort()[0];
  return list.map((x) => pilosaNode(x, x.id === first, memberState(rt, m, x.id)));
}

/** The nodes to send shard `shard` of `index` to (this node first when it holds it). */
export function shardNodes(rt: ClusterRuntime, index: string, shard: number): PilosaNode[] {
  const first = statusNodes(rt).find((n) => n.isCoordinator)?.id;
  const p = rt.view.partitionOf(index, shard);
  return rt.view.holders(p).map((x) => pilosaNode(x, x.id === first, 'READY'));
}

function memberState(rt: ClusterRuntime, m: PartitionMap | undefined, id: string): string {
  if (m === undefined) return 'STARTING';
  if (id === rt.member.id) return rt.held().every((h) => h.caughtUp) ? 'READY' : 'STARTING';
  return (m.restoring ?? []).some((r) => r.includes(id)) ? 'STARTING' : 'READY';
}

function pilosaNode(x: Member, isCoordinator: boolean, state: string): PilosaNode {
  const u = new URL(x.url);
  const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return {
    id: x.id,
    uri: { scheme: u.protocol.replace(/:$/, ''), host: u.hostname.replace(/^\[|\]$/g, ''), port },
    isCoordinator,
    state,
  };
}
