// Membership in cluster NAME: a kafkajs consumer in group NAME on NAME.log with bitledger's
// assignor (assignor-protocol.ts). Kafka decides who is in the group (session timeout: a killed
// node is dropped after a few seconds) and the leader's map says which node holds which
// partitions. On every assignment each partition is sought to this node's own stored position
// (Kafka's committed offsets are never used) and its commands are fed to the CommandSink.
//
// Catching up: a partition this node newly got counts as caught up once its position reaches
// the partition's end offset read just after the assignment. Until then the map keeps the
// previous holders beside it. The map can only change in a rebalance, and kafkajs offers no
// "rejoin": so when this node catches up on a partition for which the map still lists a handoff
// holder (or lists this node as restoring), it nudges the group — a short-lived member joins
// with metadata that the assignor ignores and leaves at once. Every member rejoins with fresh
// metadata, this node's caught-up list included, and the new map drops the handoff holders.
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { errorText } from '../../kafka/client.js';
import { ConsumerLoop, SESSION_TIMEOUT_MS } from '../../kafka/consumer-loop.js';
import type { Standing } from './grants.js';
import { type JoinState, bitledgerAssignor, decodeMap } from './assignor-protocol.js';
import { Feed } from '../commands/feed.js';
import type { Positions } from '../commands/positions.js';
import type { ClusterMessage, CommandSink, Member, PartitionMap } from '../types.js';
import { systemClock } from '../../util/clock.js';

export interface MembershipOptions {
  kafka: Kafka;
  name: string;
  topic: string;
  self(): Member;
  partitions: number;
  replicas: number;
  sink: CommandSink;
  positions: Positions;
  /** Read-committed end offsets of the given partitions (the catch-up targets). */
  endOffsets(partitions: readonly number[]): Promise<Map<number, string>>;
  /** Called when a partition is no longer this node's (waits on it fail). */
  onRevoked(partition: number): void;
  /**
   * Takeover (takeover.ts): run for a partition newly assigned here, before any of it is read
   * (the partition is paused); installs a live holder's snapshot when it is newer and answers
   * the new position, from which the topic is then read.
   */
  takeover?(partition: number): Promise<bigint | undefined>;
  logger: Logger;
}

const CATCH_UP_CHECK_MS = 500;
/** Quiet time before a nudge, so that several partitions catching up cost one rebalance. */
const NUDGE_DELAY_MS = 300;
const NUDGE_TIMEOUT_MS = 20_000;
const DESCRIBE_TRIES = 10;
/** A heartbeat gap past this, and the group may have dropped this member (read grants, grants.ts). */
const STALE_HEARTBEAT_MS = SESSION_TIMEOUT_MS / 2;

export class Membership {
  private loop: ConsumerLoop | undefined;
  private memberId = '';
  private current: PartitionMap | undefined;
  private assigned = new Set<number>();
  private readonly caughtUp = new Set<number>();
  /** End offset to reach, per newly assigned partition (read once after the assignment). */
  private readonly targets = new Map<number, bigint>();
  private checkTimer: NodeJS.Timeout | undefined;
  private nudgeTimer: NodeJS.Timeout | undefined;
  private nudging: Promise<void> | undefined;
  private stopped = false;
  private leaving = false;
  private readonly feed: Feed;
  /** Partitions paused for a takeover, with the token of the takeover that resumes them. */
  private readonly installing = new Map<number, object>();
  /** When each partition was newly assigned here (monotonic ms), and how long it took to catch up. */
  private readonly assignedAt = new Map<number, number>();
  private readonly catchUp = new Map<number, number>();
  /** ms from the assignment until the map was known, and until the partition was resumed (takeover done). */
  private readonly mappedAfter = new Map<number, number>();
  private readonly resumedAfter = new Map<number, number>();
  lastError: string | undefined;
  rebalances = 0;
  /**
   * This node's place in the group for read grants (grants.ts): the generation it settled in and
   * when (undefined from a rebalance's start until the map of the join that ended it was read),
   * `joins` counting the events that unsettle it, and its heartbeats.
   */
  private settled: { generation: number; at: number } | undefined;
  private joins = 0;
  private heartbeatAt = -Infinity;
  private staleUntil = -Infinity;

  constructor(private readonly opts: MembershipOptions) {
    this.feed = new Feed('log', opts.sink, opts.positions, (p) => this.onAdvanced(p));
  }

  start(): void {
    const o = this.opts;
    this.loop = new ConsumerLoop({
      kafka: o.kafka,
      groupId: o.name,
      topic: o.topic,
      logger: o.logger,
      partitionAssigners: [
        bitledgerAssignor({ state: () => this.joinState(), partitions: o.partitions, replicas: o.replicas }),
      ],
      // Several partitions at once: a node holds many, and each is applied in its own order.
      partitionsConsumedConcurrently: 4,
      onJoined: (memberId) => {
        this.memberId = memberId;
      },
      onRebalancing: () => this.unsettle(),
      onHeartbeat: () => this.heartbeat(),
      onAssigned: (partitions, seek) => this.onAssigned(partitions, seek),
      eachBatch: (p) => this.feed.eachBatch(p),
      onFilteredBatch: (p, last) => this.feed.filtered(p, last),
      onError: (msg) => {
        this.lastError = msg;
      },
    });
    this.loop.start();
    this.checkTimer = setInterval(() => void this.checkCatchUp(), CATCH_UP_CHECK_MS);
    this.checkTimer.unref();
  }

  /**
   * SIGTERM's hand-over: rejoins as "leaving" (the assignor gives this node's partitions to the
   * others and keeps it as a holder while they restore), then waits, at most `timeoutMs`, for a
   * map that no longer lists this node. Returns whether the hand-over finished in time.
   */
  async handOver(timeoutMs: number): Promise<boolean> {
    const m0 = this.current;
    // Alone in the map: nobody to hand over to.
    if (this.stopped || m0 === undefined || m0.members.every((x) => x.id === this.opts.self().id)) return false;
    this.leaving = true;
    const deadline = systemClock.now() + timeoutMs;
    const self = this.opts.self().id;
    const done = (): boolean => {
      const m = this.current;
      return m !== undefined && m.holders.every((h) => !h.includes(self)) && this.assigned.size === 0;
    };
    await this.nudging;
    const nudged = this.nudge();
    while (!done() && systemClock.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await nudged;
    return done();
  }

  /** Leaves the group (the others rebalance at once) and stops feeding. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.checkTimer !== undefined) clearInterval(this.checkTimer);
    if (this.nudgeTimer !== undefined) clearTimeout(this.nudgeTimer);
    await this.nudging;
    await this.loop?.stop();
    for (const p of this.assigned) this.opts.onRevoked(p);
    this.assigned = new Set();
  }

  map(): PartitionMap | undefined {
    return this.current;
  }

  holds(p: number): boolean {
    return this.assigned.has(p);
  }

  isCaughtUp(p: number): boolean {
    return this.caughtUp.has(p);
  }

  /**
   * A log command this node produced, applied from its own bytes (Feed.own) when this node holds
   * the partition caught up and no takeover is installing it; false: the consumer delivers it.
   */
  applyOwn(p: number, msg: ClusterMessage): Promise<boolean> {
    if (this.stopped || !this.holds(p) || !this.isCaughtUp(p) || this.installing.has(p)) return Promise.resolve(false);
    return this.feed.own(p, msg);
  }

  /** This node is sending a command it will apply itself (Feed.sending); the answer settles it. */
  ownSending(p: number): () => void {
    return this.feed.sending(p);
  }

  /** Partitions this node consumes now, ascending. */
  partitionsHeld(): number[] {
    return [...this.assigned].sort((a, b) => a - b);
  }

  private joinState(): JoinState {
    const m = this.current;
    const owned =
      m === undefined
        ? []
        : m.holders.flatMap((h, p) =>
            h.slice(0, Math.min(this.opts.replicas, m.members.length)).includes(this.opts.self().id) ? [p] : [],
          );
    return {
      id: this.opts.self().id,
      url: this.opts.self().url,
      owned,
      caughtUp: [...this.caughtUp].filter((p) => this.assigned.has(p)).sort((a, b) => a - b),
      generation: m?.generation ?? 0,
      ...(this.leaving ? { leaving: true } : {}),
    };
  }

  /** What read grants need to know of this node's membership (Granter, grants.ts). */
  standing(): Standing {
    const s = this.stopped ? undefined : this.settled;
    return {
      generation: s?.generation,
      settledAt: s?.at ?? Infinity,
      heartbeatAt: this.heartbeatAt,
      staleUntil: this.staleUntil,
      staleMs: STALE_HEARTBEAT_MS,
    };
  }

  /** A rebalance began (or the consumer crashed): not settled until the next join's map is read. */
  private unsettle(): void {
    this.joins++;
    this.settled = undefined;
  }

  /** A heartbeat accepted (a join counts as one): a gap longer than half the session is remembered. */
  private heartbeat(): void {
    const now = systemClock.monotonic();
    if (now - this.heartbeatAt > STALE_HEARTBEAT_MS && this.heartbeatAt > -Infinity) this.staleUntil = now;
    this.heartbeatAt = now;
  }

  private onAssigned(partitions: number[], seek: (partition: number, offset: string) => void): void {
    this.rebalances++;
    this.unsettle();
    this.heartbeat();
    const now = new Set(partitions);
    for (const p of this.assigned) {
      if (now.has(p)) continue;
      this.caughtUp.delete(p);
      this.targets.delete(p);
      this.opts.onRevoked(p);
    }
    const fresh = this.opts.takeover === undefined ? [] : partitions.filter((p) => !this.assigned.has(p));
    for (const p of partitions) {
      // Seek to this node's own position (0: the beginning): never to Kafka's committed offsets.
      seek(p, String(this.opts.positions.get('log', p)));
      if (!this.assigned.has(p)) this.targets.delete(p);
    }
    for (const p of partitions) if (!this.assigned.has(p)) this.assignedAt.set(p, systemClock.monotonic());
    for (const p of fresh) this.loop?.pause(p);
    this.assigned = now;
    const mapped = this.readMap(partitions, this.joins);
    for (const p of fresh) void this.takeOver(p, mapped);
    void this.checkCatchUp();
  }

  /**
   * A partition new here: once the map says who else holds it, a holder's snapshot is installed
   * if it is newer (opts.takeover); then the partition is read on from this node's position.
   */
  private async takeOver(p: number, mapped: Promise<void>): Promise<void> {
    const token = {};
    this.installing.set(p, token);
    try {
      await mapped;
      this.since(this.mappedAfter, p);
      const takeover = this.opts.takeover;
      if (takeover !== undefined && this.assigned.has(p) && !this.stopped)
        await this.feed.exclusive(p, () => takeover(p));
    } catch (err) {
      this.lastError = errorText(err);
      this.opts.logger.warn(
        { partition: p, err: errorText(err) },
        'cluster: no takeover from a snapshot; reading the topic',
      );
    } finally {
      if (this.installing.get(p) === token) {
        this.installing.delete(p);
        if (this.assigned.has(p)) this.loop?.seek(p, String(this.opts.positions.get('log', p)));
        this.loop?.resume(p);
        this.since(this.resumedAfter, p);
      }
    }
  }

  /** kafkajs gives a member only its partitions: the map comes from the group's description. */
  private async readMap(partitions: number[], join: number): Promise<void> {
    const want = [...partitions].sort((a, b) => a - b).join(',');
    for (let i = 0; i < DESCRIBE_TRIES && !this.stopped; i++) {
      try {
        const g = await this.loop?.describeGroup();
        const me = g?.members.find((m) => m.memberId === this.memberId);
        const got = me === undefined ? undefined : decodeMap(me.memberAssignment);
        // The description may already be of a later rebalance: use it only if it is ours.
        if (got !== undefined && got.partitions.join(',') === want) {
          if (this.current === undefined || got.map.generation >= this.current.generation) this.current = got.map;
          // Settled in this generation, unless another rebalance began meanwhile.
          if (join === this.joins && this.current === got.map)
            this.settled = { generation: got.map.generation, at: systemClock.monotonic() };
          this.maybeNudge();
          return;
        }
        if (this.assigned.size !== partitions.length || [...this.assigned].some((p) => !partitions.includes(p))) return; // a newer assignment arrived; its own readMap takes over
      } catch (err) {
        this.lastError = errorText(err);
      }
      await new Promise((r) => setTimeout(r, 100 * (i + 1)));
    }
  }

  private onAdvanced(p: number): void {
    const target = this.targets.get(p);
    if (target !== undefined && !this.caughtUp.has(p) && this.opts.positions.get('log', p) >= target)
      this.markCaughtUp(p);
  }

  private async checkCatchUp(): Promise<void> {
    const need = [...this.assigned].filter((p) => !this.caughtUp.has(p) && !this.targets.has(p));
    if (need.length > 0) {
      try {
        const ends = await this.opts.endOffsets(need);
        for (const [p, end] of ends) if (this.assigned.has(p) && !this.targets.has(p)) this.targets.set(p, BigInt(end));
      } catch (err) {
        this.lastError = errorText(err);
      }
    }
    for (const p of this.assigned) this.onAdvanced(p);
  }

  /** ms from this node's assignment of p until it caught up (undefined: not yet, or held from the start). */
  catchUpMs(p: number): number | undefined {
    return this.catchUp.get(p);
  }

  /** Stages of a takeover, ms from the assignment: the map known, the partition resumed (GET /cluster). */
  takeoverStages(p: number): { mappedMs?: number; resumedMs?: number } {
    const mappedMs = this.mappedAfter.get(p);
    const resumedMs = this.resumedAfter.get(p);
    return { ...(mappedMs === undefined ? {} : { mappedMs }), ...(resumedMs === undefined ? {} : { resumedMs }) };
  }

  private since(into: Map<number, number>, p: number): void {
    const at = this.assignedAt.get(p);
    if (at !== undefined) into.set(p, systemClock.monotonic() - at);
  }

  private markCaughtUp(p: number): void {
    this.caughtUp.add(p);
    this.since(this.catchUp, p);
    this.targets.delete(p);
    this.opts.logger.debug({ partition: p }, 'cluster: caught up');
    this.maybeNudge();
  }

  /** A rebalance is due when the map still waits for this node on a partition it has caught up on. */
  private maybeNudge(): void {
    const m = this.current;
    if (m === undefined || this.stopped) return;
    const self = this.opts.self().id;
    const r = Math.min(this.opts.replicas, m.members.length);
    const due = [...this.caughtUp].some((p) => {
      const h = m.holders[p] ?? [];
      return (m.restoring?.[p] ?? []).includes(self) || (h.slice(0, r).includes(self) && h.length > r);
    });
    if (!due || this.nudgeTimer !== undefined || this.nudging !== undefined) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      this.nudging = this.nudge().finally(() => {
        this.nudging = undefined;
      });
    }, NUDGE_DELAY_MS);
    this.nudgeTimer.unref();
  }

  /** Makes the group rebalance: a member that the assignor ignores joins and leaves. */
  private async nudge(): Promise<void> {
    const o = this.opts;
    const nudgeState: JoinState = {
      id: `nudge-${randomUUID()}`,
      url: '',
      owned: [],
      caughtUp: [],
      generation: 0,
      nudge: true,
    };
    const c = o.kafka.consumer({
      groupId: o.name,
      partitionAssigners: [
        bitledgerAssignor({ state: () => nudgeState, partitions: o.partitions, replicas: o.replicas }),
      ],
      sessionTimeout: 6_000,
      heartbeatInterval: 1_000,
      // A member without partitions sleeps this long between heartbeats (kafkajs's default is
      // 5 s): the group waits for it to rejoin, so each rebalance a nudge took part in lasted 5 s,
      // and every member's fetching stopped meanwhile (writes waited for their holders).
      maxWaitTimeInMs: 100,
      retry: { retries: 2 },
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      const joined = new Promise<void>((resolve) => {
        c.on(c.events.GROUP_JOIN, () => resolve());
        timer = setTimeout(resolve, NUDGE_TIMEOUT_MS);
      });
      await c.connect();
      await c.subscribe({ topics: [o.topic] });
      await c.run({ autoCommit: false, eachBatch: async () => undefined });
      await joined;
      o.logger.debug('cluster: nudged the group to drop handoff holders');
    } catch (err) {
      this.lastError = errorText(err);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      await c.disconnect().catch(() => undefined);
    }
  }
}
