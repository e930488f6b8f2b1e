// The cluster as Pilosa clients read it: /status's node list and cluster state, and the holder
// to send one shard to (/internal/fragment/nodes), in Pilosa 1.x's Node shape.
//
// Coordinator: any node coordinates any request in bitledger (schema, keys, writes and reads all
// go through the cluster's topics from the node that received them), so each node names itself
// the coordinator in its own answers. A client that asks a node for the coordinator gets that
// node, and sends it what Pilosa sends the coordinator (key translation, schema changes).
import type { ClusterRuntime } from './runtime.js';
import type { Member, PartitionMap } from '../types.js';

export interface PilosaNode {
  [k: string]: string | boolean | { [k: string]: string | number };
  id: string;
  uri: { scheme: string; host: string; port: number };
  isCoordinator: boolean;
  state: string;
}

export type ClusterState = 'STARTING' | 'NORMAL' | 'DEGRADED';

/** The cluster's state and, when DEGRADED, why (each reason one sentence). */
export interface ClusterStatus {
  state: ClusterState;
  reasons: string[];
}

/**
 * STARTING before the first map; DEGRADED while any partition has fewer than R caught-up holders
 * that answer, or any other reason the runtime lists (rt.degradedReasons); NORMAL otherwise.
 */
export function clusterStatus(rt: ClusterRuntime): ClusterStatus {
  const m = rt.view.map();
  if (m === undefined) return { state: 'STARTING', reasons: [] };
  const reasons: string[] = [];
  const down = rt.health.down().filter((id) => m.members.some((x) => x.id === id));
  if (down.length > 0) reasons.push(`member${down.length > 1 ? 's' : ''} ${down.join(', ')} not answering`);
  const short: number[] = [];
  for (let p = 0; p < m.partitions; p++) if (liveCaughtUpHolders(rt, m, p).length < rt.settings.replicas) short.push(p);
  if (short.length > 0)
    reasons.push(
      `${short.length} of ${m.partitions} partitions have fewer than ${rt.settings.replicas} caught-up live holders (${listed(short)})`,
    );
  for (const r of rt.degradedReasons) {
    const why = r();
    if (why !== undefined) reasons.push(why);
  }
  return { state: reasons.length > 0 ? 'DEGRADED' : 'NORMAL', reasons };
}

/** Holders of p that have its data now (this node by its own knowledge, others by the map). */
export function caughtUpHolders(rt: ClusterRuntime, m: PartitionMap, p: number): string[] {
  const restoring = new Set(m.restoring?.[p] ?? []);
  const self = rt.member.id;
  const mine = new Map(rt.held().map((h) => [h.partition, h.caughtUp]));
  return (m.holders[p] ?? []).filter((id) => (id === self ? mine.get(p) === true : !restoring.has(id)));
}

function liveCaughtUpHolders(rt: ClusterRuntime, m: PartitionMap, p: number): string[] {
  return caughtUpHolders(rt, m, p).filter((id) => rt.view.isLive(id));
}

/** Every member, Pilosa-shaped; this node is the coordinator in its own answers (above). */
export function statusNodes(rt: ClusterRuntime): PilosaNode[] {
  const m = rt.view.map();
  const members = m?.members ?? [];
  const list = members.some((x) => x.id === rt.member.id) ? members : [...members, rt.member];
  return list.map((x) => pilosaNode(x, x.id === rt.member.id, memberState(rt, m, x.id)));
}

/**
 * The one node to send shard `shard` of `index` to: this node when it holds the shard and has
 * caught up, else the first caught-up holder that answers. A client sends a shard's import to
 * every node listed, so listing one makes each import enter the cluster once. With no such holder
 * (all down or restoring) this node is named: any node accepts any shard's import and writes it
 * through the cluster's topics, where the holders find it once they are back.
 */
export function shardNodes(rt: ClusterRuntime, index: string, shard: number): PilosaNode[] {
  const p = rt.view.partitionOf(index, shard);
  const m = rt.view.map();
  const ready = m === undefined ? [] : liveCaughtUpHolders(rt, m, p);
  const best = rt.view.holders(p).find((x) => ready.includes(x.id)) ?? rt.member;
  return [pilosaNode(best, best.id === rt.member.id, 'READY')];
}

function memberState(rt: ClusterRuntime, m: PartitionMap | undefined, id: string): string {
  if (m === undefined) return 'STARTING';
  if (id === rt.member.id) return rt.held().every((h) => h.caughtUp) ? 'READY' : 'STARTING';
  if (!rt.view.isLive(id)) return 'DOWN';
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

/** Partition numbers for a reason: the first few, then how many more. */
function listed(ps: readonly number[]): string {
  const head = ps.slice(0, 8).join(', ');
  return ps.length > 8 ? `${head} and ${ps.length - 8} more` : head;
}
