// bitledger's partition assignor, pure (the Kafka adapter is assignor-protocol.ts): every
// partition of NAME.log to R distinct nodes (as Kafka Streams places standby tasks), balanced
// (node loads differ by at most one), sticky (a node keeps what it owned while it stays, up to
// its share), and safe during a handoff: while an owner has not caught up on a partition, the
// nodes that have stay in its holder list after the owners, so a query always finds a holder
// with the data. Deterministic: the same members give the same map on whichever node leads.
import type { Member, PartitionMap } from '../types.js';

/** What a member tells the leader when it joins (its Kafka group metadata). */
export interface MemberState {
  /** Kafka's member id. */
  readonly memberId: string;
  /** Node id (data directory) and advertised URL. */
  readonly id: string;
  readonly url: string;
  /** Partitions it owned (first R of holders) in the last map it received. */
  readonly owned: readonly number[];
  /** Partitions it consumes and has caught up on (its data is current). */
  readonly caughtUp: readonly number[];
  /** Shutting down: owns nothing, and stays a holder only until the new owners caught up. */
  readonly leaving?: boolean;
}

export interface Assignment {
  readonly map: PartitionMap;
  /** Kafka member id → the partitions it consumes (every p whose holders include its node). */
  readonly partitionsByMember: ReadonlyMap<string, number[]>;
}

interface Node {
  id: string;
  url: string;
  owned: Set<number>;
  caughtUp: Set<number>;
  cap: number;
  load: Set<number>;
  leaving: boolean;
}

export function assign(
  members: readonly MemberState[],
  partitions: number,
  replicas: number,
  generation: number,
): Assignment {
  const all = mergeByNode(members);
  // A leaving node hands over: it owns nothing unless nobody else is there.
  const staying = all.filter((n) => !n.leaving);
  const nodes = staying.length > 0 ? staying : all;
  const r = Math.min(replicas, nodes.length);
  const owners: string[][] = Array.from({ length: partitions }, () => []);
  if (nodes.length > 0) {
    setCaps(nodes, partitions * r);
    keepOwned(nodes, owners, r);
    fill(nodes, owners, r);
  }
  const byId = new Map(all.map((n) => [n.id, n]));
  const holders: string[][] = [];
  const restoring: string[][] = [];
  for (let p = 0; p < partitions; p++) {
    const own = [...owners[p]].sort();
    const behind = own.filter((id) => !byId.get(id)?.caughtUp.has(p));
    // Previous holders that have the data stay while an owner restores.
    const keep =
      behind.length === 0 ? [] : all.filter((n) => n.caughtUp.has(p) && !own.includes(n.id)).map((n) => n.id);
    holders.push([...own, ...keep]);
    restoring.push(behind);
  }
  const map: PartitionMap = {
    generation,
    partitions,
    members: all.map((n): Member => ({ id: n.id, url: n.url })),
    holders,
    restoring,
  };
  const partitionsByMember = new Map<string, number[]>();
  for (const m of members) {
    partitionsByMember.set(
      m.memberId,
      holders.flatMap((h, p) => (h.includes(m.id) ? [p] : [])),
    );
  }
  return { map, partitionsByMember };
}

/**
 * One node per node id. Two Kafka members with one id are a restarted node and its predecessor's
 * session that has not expired yet: both get the node's partitions; only what both say they have
 * caught up on counts (the restarted one may not have), what either owned is kept.
 */
function mergeByNode(members: readonly MemberState[]): Node[] {
  const byId = new Map<string, Node>();
  for (const m of [...members].sort((a, b) => cmp(a.memberId, b.memberId))) {
    const n = byId.get(m.id);
    if (n === undefined) {
      byId.set(m.id, {
        id: m.id,
        url: m.url,
        owned: new Set(m.owned),
        caughtUp: new Set(m.caughtUp),
        cap: 0,
        load: new Set(),
        leaving: m.leaving === true,
      });
      continue;
    }
    for (const p of m.owned) n.owned.add(p);
    n.leaving = n.leaving && m.leaving === true;
    n.caughtUp = new Set(m.caughtUp.filter((p) => n.caughtUp.has(p)));
  }
  return [...byId.values()].sort((a, b) => cmp(a.id, b.id));
}

/** Shares of `slots` that differ by at most one; the larger ones to the nodes that owned most. */
function setCaps(nodes: Node[], slots: number): void {
  const floor = Math.floor(slots / nodes.length);
  const extra = slots % nodes.length;
  const order = [...nodes].sort((a, b) => b.owned.size - a.owned.size || cmp(a.id, b.id));
  order.forEach((n, i) => {
    n.cap = floor + (i < extra ? 1 : 0);
  });
}

/** Stickiness: each node keeps what it owned (caught-up partitions first), up to its cap. */
function keepOwned(nodes: Node[], owners: string[][], r: number): void {
  for (const n of nodes) {
    const mine = [...n.owned].filter((p) => p >= 0 && p < owners.length);
    mine.sort((a, b) => Number(n.caughtUp.has(b)) - Number(n.caughtUp.has(a)) || a - b);
    for (const p of mine) {
      if (n.load.size >= n.cap) break;
      if (owners[p].length >= r) continue;
      owners[p].push(n.id);
      n.load.add(p);
    }
  }
}

/** Every partition up to r owners: caught-up nodes first, then the least loaded. */
function fill(nodes: Node[], owners: string[][], r: number): void {
  for (let p = 0; p < owners.length; p++) {
    while (owners[p].length < r) {
      const free = nodes.filter((n) => n.load.size < n.cap && !n.load.has(p));
      free.sort(
        (a, b) => Number(b.caughtUp.has(p)) - Number(a.caughtUp.has(p)) || a.load.size - b.load.size || cmp(a.id, b.id),
      );
      const pick = free[0] ?? moveShare(nodes, p) ?? makeRoom(nodes, owners, p);
      owners[p].push(pick.id);
      pick.load.add(p);
    }
  }
}

/**
 * Every node with room already holds p: when one of them has the larger share and a full node
 * that lacks p has the smaller, swap the shares (nothing moves; balance holds).
 */
function moveShare(nodes: Node[], p: number): Node | undefined {
  const floor = Math.min(...nodes.map((n) => n.cap));
  const x = nodes.find((n) => n.load.size < n.cap && n.cap > floor);
  const y = nodes.find((n) => !n.load.has(p) && n.cap === floor && n.load.size === n.cap);
  if (x === undefined || y === undefined) return undefined;
  x.cap--;
  y.cap++;
  return y;
}

/**
 * Otherwise: move some q from a full node y that lacks p to a node x
 * with room (which lacks q), and give p to y. Such y and q exist: x holds p and has room, so y's
 * load is at least x's and y holds something x does not.
 */
function makeRoom(nodes: Node[], owners: string[][], p: number): Node {
  const x = nodes.find((n) => n.load.size < n.cap);
  if (x === undefined) throw new Error(`assignor: no room left for partition ${p}`);
  for (const y of nodes) {
    if (y.load.has(p)) continue;
    for (const q of y.load) {
      if (x.load.has(q)) continue;
      y.load.delete(q);
      owners[q] = owners[q].map((id) => (id === y.id ? x.id : id));
      x.load.add(q);
      return y;
    }
  }
  throw new Error(`assignor: cannot place partition ${p}`);
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
