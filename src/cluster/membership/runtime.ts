// cluster: cluster mode (docs/CLUSTER.md), on when --cluster-name is set. Kafka does membership,
// assignment, ordering and replication; this layer follows the cluster's topics into the
// engine through a CommandSink and keeps the node's view of who holds what.
// open() checks the flags and the topics (a wrong partition count stops the start); start()
// joins the group once the node's URL is known (the port is bound); stop() hands this node's
// partitions over (bounded) and leaves, so the others rebalance at once.
import type { Event } from '../../events/types.js';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import type { Config } from '../../config/config.js';
import type { Engine } from '../../engine/engine.js';
import { createKafka } from '../../kafka/client.js';
import { ClusterEnds, KEEP_MS } from '../reads/cluster-ends.js';
import { EndOffsets } from '../reads/end-offsets.js';
import { Membership } from './membership.js';
import { MetaFollower } from '../commands/meta-follower.js';
import { Positions } from '../commands/positions.js';
import { type ClusterSettings, clusterSettings, derivedAdvertise } from '../settings.js';
import { type ClusterTopics, ensureClusterTopics } from './topics.js';
import { type ClusterView, type CommandSink, type Member, PARTITION_MOVED, PARTITION_MOVED_CODE } from '../types.js';
import { Takeover } from './takeover.js';
import { NodeView } from './view.js';
import { DomainError } from '../../domain/errors.js';
import { BrokerWatch } from './broker-watch.js';
import { MemberHealth } from './health.js';
import { GRANT_PATH, Granter, ReadGrants } from './grants.js';
import { systemClock } from '../../util/clock.js';

export { clusterSettings } from '../settings.js';
export type { ClusterView, CommandSink } from '../types.js';

/** Builds the node's command applier once the view exists (the applier waits on it). */
export type SinkFactory = (view: ClusterView, engine: Engine) => CommandSink;

/** How long SIGTERM waits for the new holders of this node's partitions to catch up. */
const HAND_OVER_MS = 15_000;
/** The broker watch's probe: one try, answered or failed within a second. */
const PROBE_TIMEOUTS = { connectionTimeout: 1_000, requestTimeout: 1_000 };

export class ClusterRuntime {
  private self: Member;
  private started = false;
  readonly view: NodeView;
  private readonly membership: Membership;
  private readonly meta: MetaFollower;
  /** Takeovers from snapshots (GET /cluster lists the last ones). */
  readonly takeover: Takeover;
  /** Which other members answer now (membership/health.ts). */
  readonly health: MemberHealth;
  /** This node's read grants to the others (grants.ts): the write path's hold asks it. */
  readonly granter = new Granter(() => this.membership.standing());
  /** The grants this node's reads hold from every member (grants.ts). */
  readonly readGrants = new ReadGrants({
    map: () => this.membership.map(),
    self: () => this.self,
    ask: (member, generation, ms) => this.askGrant(member, generation, ms),
    keepMs: KEEP_MS,
  });
  /**
   * More reasons for a DEGRADED cluster state than partitions short of live holders (membership/
   * status.ts collects them): each returns its reason, or undefined while all is well.
   */
  readonly degradedReasons: (() => string | undefined)[] = [];

  private made: CommandSink | undefined;

  private constructor(
    readonly settings: ClusterSettings,
    readonly topics: ClusterTopics,
    nodeId: string,
    private readonly ends: EndOffsets,
    readonly positions: Positions,
    /** The node's Kafka client, shared with the write path's producer. */
    readonly kafka: Kafka,
    private readonly sinkFactory: SinkFactory,
    private readonly engine: Engine,
    private readonly logger: Logger,
    /** Whether the broker answers now: requests pass their Kafka steps through it. */
    readonly broker: BrokerWatch,
  ) {
    this.self = { id: nodeId, url: settings.advertise };
    this.degradedReasons.push(() => broker.reason());
    // Built on first delivery: the applier may need the view, which needs the membership.
    const sink: CommandSink = { deliver: (...a) => this.sink().deliver(...a) };
    // A partition new here starts from a live holder's snapshot when the sink can install one.
    const install = (p: number, events: Iterable<Event>): Promise<bigint | undefined> =>
      this.sink().install?.(p, events) ?? Promise.resolve(undefined);
    const self = (): Member => this.self;
    this.membership = new Membership({
      kafka,
      name: settings.name,
      topic: topics.log,
      self,
      partitions: settings.partitions,
      replicas: settings.replicas,
      sink,
      positions,
      endOffsets: async (ps) => {
        const all = await ends.of(topics.log);
        return new Map(ps.map((p) => [p, all.get(p) ?? '0']));
      },
      // Only a sink that can install a snapshot asks holders for one (tests of membership alone cannot).
      takeover: (p) => (this.sink().install === undefined ? Promise.resolve(undefined) : takeover.run(p)),
      onRevoked: (p) =>
        positions.failAll(
          'log',
          p,
          new DomainError('unavailable', `partition ${p} ${PARTITION_MOVED}`, PARTITION_MOVED_CODE),
        ),
      logger,
    });
    this.health = new MemberHealth({
      others: () => (this.membership.map()?.members ?? []).filter((m) => m.id !== this.self.id),
      fetch: (url, init) => this.view.rawFetch(url, init),
      clock: systemClock,
      onChange: (id, down) =>
        logger.warn({ member: id }, down ? 'cluster: member stopped answering' : 'cluster: member answers again'),
    });
    this.view = new NodeView(
      settings.name,
      self,
      settings.partitions,
      settings.replicas,
      topics,
      this.membership,
      positions,
      ends,
      new ClusterEnds(ends, topics, systemClock, undefined, this.readGrants),
      this.health,
      settings.memberToken,
    );
    const takeover = new Takeover(this.view, install, logger);
    this.takeover = takeover;
    this.meta = new MetaFollower(kafka, settings.name, topics.meta, sink, positions, logger);
  }

  /** A grant from a member (this node: its own Granter); an error or an older member's 404 is no grant. */
  private async askGrant(member: Member, generation: number, ms: number): Promise<boolean> {
    if (member.id === this.self.id) return this.granter.grant(generation, ms);
    const r = await this.view.memberPost(
      `${member.url}${GRANT_PATH}`,
      JSON.stringify({ generation, ms }),
      AbortSignal.timeout(ms),
    );
    return r.status === 200 && (JSON.parse(r.text) as { granted?: unknown }).granted === true;
  }

  private sink(): CommandSink {
    this.made ??= this.sinkFactory(this.view, this.engine);
    return this.made;
  }

  /** undefined without --cluster-name; throws ConfigError / StartupError for a bad start. */
  static async open(
    cfg: Config,
    engine: Engine,
    sinkFactory: SinkFactory,
    logger: Logger,
    nodeId: string,
  ): Promise<ClusterRuntime | undefined> {
    const settings = clusterSettings(cfg);
    if (settings === undefined) return undefined;
    const log = logger.child({ mod: 'cluster', cluster: settings.name });
    const kafka = await createKafka(cfg.kafkaBrokers, `bitledger-${settings.name}-${nodeId}`, log);
    const topics = await ensureClusterTopics(kafka, settings.name, settings.partitions);
    const positions = await Positions.load(engine, settings.partitions);
    const probe = await createKafka(
      cfg.kafkaBrokers,
      `bitledger-${settings.name}-${nodeId}-watch`,
      log,
      PROBE_TIMEOUTS,
    );
    return new ClusterRuntime(
      settings,
      topics,
      nodeId,
      new EndOffsets(kafka, [topics.meta, topics.log]),
      positions,
      kafka,
      sinkFactory,
      engine,
      log,
      new BrokerWatch(probe, cfg.kafkaBrokers, systemClock, log),
    );
  }

  /** Joins the group and follows the topics; `scheme`, `host`, `port` give the URL when --advertise is not set. */
  start(bound: { scheme: string; host: string; port: number }): void {
    if (this.started) return;
    this.started = true;
    if (this.settings.advertise === '')
      this.self = { ...this.self, url: derivedAdvertise(bound.scheme, bound.host, bound.port) };
    this.logger.info(
      { node: this.self, partitions: this.settings.partitions, replicas: this.settings.replicas },
      'cluster: joining',
    );
    this.broker.start();
    this.meta.start();
    this.membership.start();
    this.health.start();
  }

  get member(): Member {
    return this.self;
  }

  /** Whether this node consumes log partition p and has caught up on it (a takeover's source). */
  holdsCaughtUp(p: number): boolean {
    return this.membership.holds(p) && this.membership.isCaughtUp(p);
  }

  /** Partitions this node consumes now, and whether each has caught up. */
  held(): { partition: number; caughtUp: boolean; catchUpMs?: number; mappedMs?: number; resumedMs?: number }[] {
    return this.membership.partitionsHeld().map((p) => {
      const ms = this.membership.catchUpMs(p);
      return {
        partition: p,
        caughtUp: this.membership.isCaughtUp(p),
        ...(ms === undefined ? {} : { catchUpMs: ms }),
        ...this.membership.takeoverStages(p),
      };
    });
  }

  get lastError(): string | undefined {
    return this.membership.lastError ?? this.meta.lastError;
  }

  /**
   * Hands this node's partitions over (at most `handOverMs`), leaves the group and stops
   * following; waits on positions fail. Returns whether the hand-over completed.
   */
  async stop(handOverMs = HAND_OVER_MS): Promise<boolean> {
    let handedOver = false;
    this.health.stop();
    if (this.started && handOverMs > 0) {
      handedOver = await this.membership.handOver(handOverMs).catch(() => false);
      this.logger.info({ handedOver }, 'cluster: leaving');
    }
    await this.membership.stop();
    await this.meta.stop();
    await this.ends.close();
    await this.broker.stop();
    this.positions.failEverything(new DomainError('unavailable', 'this node is leaving the cluster'));
    return handedOver;
  }
}
