// The node's view of the cluster (ClusterView, types.ts): the map from the last rebalance, which
// members can answer for a partition now, positions, end offsets and the waits for them.
import { DomainError } from '../../domain/errors.js';
import type { ClusterEnds } from '../reads/cluster-ends.js';
import type { EndOffsets } from '../reads/end-offsets.js';
import { isRefused, isUnreachable, type MemberHealth } from './health.js';
import { type StreamAnswer, postJson, postStream, postUnreachable } from './member-post.js';
import type { Membership } from './membership.js';
import { partitionOf } from './partition.js';
import type { Positions } from '../commands/positions.js';
import type { ClusterTopics } from './topics.js';
import type { ClusterMessage, ClusterTopic, ClusterView, Member, PartitionMap } from '../types.js';

/** How long a wait may last on a partition this node is still restoring before it gives up. */
const RESTORING_WAIT_MS = 1_000;

export class NodeView implements ClusterView {
  constructor(
    readonly name: string,
    private readonly selfOf: () => Member,
    readonly partitions: number,
    readonly replicas: number,
    private readonly topics: ClusterTopics,
    private readonly membership: Membership,
    private readonly positions: Positions,
    private readonly ends: EndOffsets,
    private readonly readEnds: ClusterEnds,
    /** Which members answer now (probes and failed calls). */
    readonly health: MemberHealth,
    /** The members' bearer token (--auth-token-file); undefined: none. */
    private readonly token?: string,
  ) {}

  /** A call to a member; one that cannot connect counts against the member's health. */
  async memberFetch(url: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await this.rawFetch(url, init);
    } catch (err) {
      if (isUnreachable(err)) {
        const m = this.map()?.members.find((x) => url.startsWith(`${x.url}/`));
        if (m !== undefined && m.id !== this.self.id) this.health.failed(m.id, isRefused(err));
      }
      throw err;
    }
  }

  memberPost(url: string, body: string, signal?: AbortSignal): Promise<{ status: number; text: string }> {
    return this.counted(url, () => postJson(url, body, this.auth(), signal));
  }

  memberPostStream(url: string, body: string, signal?: AbortSignal): Promise<StreamAnswer> {
    return this.counted(url, () => postStream(url, body, this.auth(), signal));
  }

  private auth(): Record<string, string> {
    return this.token === undefined ? {} : { authorization: `Bearer ${this.token}` };
  }

  /** A post whose connection failure counts against the member's health. */
  private async counted<T>(url: string, post: () => Promise<T>): Promise<T> {
    try {
      return await post();
    } catch (err) {
      const { unreachable, refused } = postUnreachable(err);
      if (unreachable) {
        const m = this.map()?.members.find((x) => url.startsWith(`${x.url}/`));
        if (m !== undefined && m.id !== this.self.id) this.health.failed(m.id, refused);
      }
      throw err;
    }
  }

  /** A call to a member with the members' token, and nothing else. */
  rawFetch(url: string, init: RequestInit = {}): Promise<Response> {
    if (this.token === undefined) return fetch(url, init);
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.token}`);
    return fetch(url, { ...init, headers });
  }

  /** Whether a member answers (this node always does). */
  isLive(id: string): boolean {
    return id === this.self.id || !this.health.isDown(id);
  }

  /** This node (its URL is known once the port is bound). */
  get self(): Member {
    return this.selfOf();
  }

  partitionOf(index: string, shard: number): number {
    return partitionOf(index, shard, this.partitions);
  }

  map(): PartitionMap | undefined {
    return this.membership.map();
  }

  /**
   * This node (when caught up), live caught-up holders, then live ones still restoring, then
   * this node when restoring, then members that stopped answering (tried last, not skipped: a
   * probe may be wrong under load, and a call to them costs a connection refused).
   */
  holders(p: number): Member[] {
    const m = this.map();
    if (m === undefined) return [];
    const ids = m.holders[p] ?? [];
    const restoring = new Set(m.restoring?.[p] ?? []);
    const selfId = this.self.id;
    const selfReady = this.membership.holds(p) && this.membership.isCaughtUp(p);
    const others = ids.filter((id) => id !== selfId && !this.health.isDown(id));
    const order = [
      ...(selfReady ? [selfId] : []),
      ...others.filter((id) => !restoring.has(id)),
      ...others.filter((id) => restoring.has(id)),
      ...(!selfReady && this.membership.holds(p) ? [selfId] : []),
      ...ids.filter((id) => id !== selfId && this.health.isDown(id)),
    ];
    const byId = new Map(m.members.map((x) => [x.id, x]));
    byId.set(selfId, this.self);
    return order.flatMap((id) => {
      const x = byId.get(id);
      return x === undefined ? [] : [x];
    });
  }

  position(topic: ClusterTopic, partition: number): bigint {
    return this.positions.get(topic, partition);
  }

  applyOwn(partition: number, message: ClusterMessage): Promise<boolean> {
    return this.membership.applyOwn(partition, message);
  }

  ownSending(partition: number): () => void {
    return this.membership.ownSending(partition);
  }

  async logEndOffsets(partitions: readonly number[]): Promise<Map<number, string>> {
    const all = await this.ends.of(this.topics.log);
    return new Map(partitions.map((p) => [p, all.get(p) ?? '0']));
  }

  async metaEndOffset(): Promise<string> {
    return (await this.ends.of(this.topics.meta)).get(0) ?? '0';
  }

  endsForRead(arrived: number): Promise<{ meta: string; log: ReadonlyMap<number, string> }> {
    return this.readEnds.forRead(arrived);
  }

  metaEndForWrite(arrived: number): Promise<string> {
    return this.readEnds.forMeta(arrived);
  }

  /**
   * Requests that waited for a refresh of the read ends, none young enough being ready (GET
   * /cluster; the bench counts them per query): the others found one the keeper had refreshed.
   */
  get endsRefreshes(): number {
    return this.readEnds.waited;
  }

  /** Reads that held no grant from every member and waited for a refresh sent after they arrived. */
  get readsUngranted(): number {
    return this.readEnds.ungranted;
  }

  /** ListOffsets rounds of the read ends sent, the keeper's included (GET /cluster; issue 21's bench). */
  get endsRounds(): number {
    return this.readEnds.refreshes;
  }

  waitApplied(topic: ClusterTopic, partition: number, next: string, signal?: AbortSignal): Promise<void> {
    const target = BigInt(next);
    if (this.positions.get(topic, partition) >= target) return Promise.resolve();
    if (topic === 'meta') return this.positions.wait('meta', 0, target, signal);
    if (!this.membership.holds(partition))
      return Promise.reject(
        new DomainError(
          'unavailable',
          `node ${this.self.id} does not hold partition ${partition} of cluster ${this.name}`,
        ),
      );
    if (this.membership.isCaughtUp(partition)) return this.positions.wait('log', partition, target, signal);
    return this.positions.wait('log', partition, target, signal, {
      ms: RESTORING_WAIT_MS,
      text: `node ${this.self.id} is still restoring partition ${partition} of cluster ${this.name} (at offset ${this.positions.get('log', partition)} of ${next})`,
    });
  }
}
