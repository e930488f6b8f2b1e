// One cluster node assembled for the composition root (src/app.ts): membership (ClusterRuntime),
// the write path whose applier membership delivers to, the read fan-out, and what the HTTP app
// needs in cluster mode (the cluster services, /status members, holders of a shard, the
// cluster-wide max shard, the internal routes).
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import type { Engine } from '../engine/engine.js';
import type { HttpContext } from '../http/context.js';
import type { Topology } from '../http/topology.js';
import { everyRoutePlugin, scopedPlugin } from '../util/fastify-plugins.js';
import type { LegacyRelease } from '../service/legacy/legacy-release.js';
import { bitDepthRoutes, clusterBitDepths, recalculateAtMembers } from './reads/member-figures.js';
import { clusterExport } from './reads/export-route.js';
import { clusterHttpRoutes } from './http-routes.js';
import { ClusterIngests } from './ingest/ingests.js';
import { ClusterRuntime, type SinkFactory } from './membership/runtime.js';
import { clusterPartialRoutes } from './reads/partial-routes.js';
import type { PartialRunner } from './reads/partial-runner.js';
import { QueryFanout } from './reads/query-fanout.js';
import { shardsMaxAnswer } from './reads/shards-max.js';
import { takeoverRoutes } from './membership/takeover.js';
import { clusterStatus, shardNodes, statusNodes } from './membership/status.js';
import { ClusterFrameService, ClusterLegacyImports } from './coordination/legacy-coordinator.js';
import { type ClusterWritePath, clusterWritePath } from './coordination/write-path.js';
import { AckHold, FRESH_MS } from './reads/cluster-ends.js';
import { systemClock } from '../util/clock.js';

export { CLUSTER_LOCAL_WRITE_REASON } from './commands/local-writes.js';

export interface ClusterNodeOptions {
  cfg: Config;
  engine: Engine;
  logger: Logger;
  nodeId: string;
  legacyRelease: LegacyRelease;
  /** Tests of membership alone deliver to their own sink; the node's applier otherwise. */
  sink?: SinkFactory;
}

export class ClusterNode {
  private runner: PartialRunner | undefined;

  private constructor(
    readonly runtime: ClusterRuntime,
    readonly writes: ClusterWritePath,
    private readonly engine: Engine,
    /** Kafka-fed ingests of the cluster (the /ingest routes answer from them). */
    readonly ingests: ClusterIngests,
  ) {}

  /** undefined without --cluster-name. */
  static async open(o: ClusterNodeOptions): Promise<ClusterNode | undefined> {
    let writes: ClusterWritePath | undefined;
    let fanout: QueryFanout | undefined;
    let node: ClusterNode | undefined;
    const make = (rt: ClusterRuntime): ClusterWritePath =>
      clusterWritePath({
        engine: o.engine,
        kafka: rt.kafka,
        // A node that mirrors its log publishes what it wrote: its applies stay synced.
        syncCommits: o.cfg.kafkaMirrorTopic !== '',
        view: rt.view,
        // The fan-out needs this node's partial runner, which exists once the cluster's routes
        // plugin has loaded (app.ready, before the node joins the group and any query comes).
        reads: (index, query, opts, req, at) => {
          fanout ??= new QueryFanout(
            rt.view,
            { engine: o.engine, runner: node?.partialRunner() ?? missingRunner() },
            {
              queryTimeoutMs: o.cfg.queryTimeout,
              maxResultRows: o.cfg.maxResultRows,
              maxResultBytes: o.cfg.maxResultBytes,
              gate: rt.broker,
              staleReads: o.cfg.clusterStaleReads,
            },
          );
          return fanout.run(index, query, opts, req, at);
        },
        logger: o.logger.child({ mod: 'cluster-writes' }),
        legacyRelease: o.legacyRelease,
        // Headroom for the record batch and headers around one message.
        chunkBytes: Math.max(64 * 1024, rt.topics.maxMessageBytes - 64 * 1024),
        gate: rt.broker,
        // Log writes held only while this node granted reads (membership/grants.ts).
        hold: new AckHold(systemClock, FRESH_MS, rt.granter),
      });
    const sink: SinkFactory = o.sink ?? (() => writes?.applier ?? missingApplier());
    const rt = await ClusterRuntime.open(o.cfg, o.engine, sink, o.logger, o.nodeId);
    if (rt === undefined) return undefined;
    writes = make(rt);
    const ingests = new ClusterIngests({
      engine: o.engine,
      kafka: rt.kafka,
      writes: writes.writes,
      imports: writes.services.imports,
      applier: writes.applier,
      chunkBytes: Math.max(64 * 1024, rt.topics.maxMessageBytes - 64 * 1024),
      logger: o.logger.child({ mod: 'cluster-ingest' }),
    });
    node = new ClusterNode(rt, writes, o.engine, ingests);
    return node;
  }

  private partialRunner(): PartialRunner | undefined {
    return this.runner;
  }

  /** The services the HTTP routes call in place of the local ones. */
  get services(): ClusterWritePath['services'] {
    return this.writes.services;
  }

  /** What buildHttpApp's context takes from the cluster in place of the local parts. */
  httpContext(): Pick<HttpContext, 'schema' | 'query' | 'imports' | 'topology'> {
    const s = this.writes.services;
    return { schema: s.schema, query: s.query, imports: s.imports, topology: this.topology() };
  }

  /** The routes' view of the cluster (http/topology.ts): every member, and who holds what. */
  private topology(): Topology {
    const s = this.writes.services;
    const frames = new ClusterFrameService(this.engine, this.writes.writes, async (index, pql) => {
      const opts = { columnAttrs: false, excludeColumns: false, excludeRowAttrs: false };
      return (await s.query.execute(index, pql, opts)).response;
    });
    return {
      kind: 'cluster',
      keys: s.keys,
      frames,
      protobufForwarder: s.imports,
      inputs: frames.inputs,
      legacyImports: new ClusterLegacyImports(this.engine, s.imports),
      nodes: () => statusNodes(this.runtime),
      shardNodes: (index, shard) => shardNodes(this.runtime, index, shard),
      shardsMax: shardsMaxAnswer(this.runtime.view, this.engine),
      bitDepths: () => clusterBitDepths(this.runtime.view, this.engine),
      recalculateElsewhere: () => recalculateAtMembers(this.runtime.view),
      exportsThroughMembers: true,
      exportShard: (req, own) => {
        const run = (): Promise<string> =>
          clusterExport(
            this.runtime.view,
            { ...req, ...(req.waitFor === undefined ? {} : { waitFor: req.waitFor }) },
            own,
          );
        // A member asking for this node's own CSV needs no Kafka; a client's export reads an end offset.
        return req.local === true ? run() : this.runtime.broker.through(run);
      },
    };
  }

  /** /status in cluster mode: every member, the cluster's state and, when DEGRADED, why. */
  statusExtras(): Record<string, unknown> {
    const s = clusterStatus(this.runtime);
    return {
      state: s.state,
      nodes: statusNodes(this.runtime),
      ...(s.reasons.length > 0 ? { reason: s.reasons.join('; ') } : {}),
    };
  }

  /**
   * What the cluster contributes to the HTTP app (src/server-http.ts registers them before the
   * route modules): the read-your-writes wait on every route, and in a scope of their own GET
   * /cluster, the members' internal routes (partial reads, results, takeover, bit depths, ingest
   * status).
   */
  plugins(): FastifyPluginAsync[] {
    return [
      everyRoutePlugin('clusterHooks', async (app) => this.writes.hooks(app)),
      scopedPlugin('clusterRoutes', async (app) => this.routes(app)),
    ];
  }

  private routes(app: FastifyInstance): void {
    clusterHttpRoutes(app, this.runtime, this.writes.writes.stages, this.writes.writes);
    bitDepthRoutes(app, this.engine);
    this.runner = clusterPartialRoutes(app, { engine: this.engine, view: this.runtime.view });
    takeoverRoutes(app, {
      engine: this.engine,
      view: this.runtime.view,
      holdsCaughtUp: (p) => this.runtime.holdsCaughtUp(p),
    });
    this.writes.routes(app);
    this.ingests.routes(app);
  }

  /** Starts the producer, then joins the group (the advertised URL needs the bound port). */
  async start(bound: { scheme: string; host: string; port: number }): Promise<void> {
    await this.writes.start();
    this.runtime.start(bound);
    this.ingests.begin();
  }

  /** Hands over and leaves the group, then stops the producer. */
  async stop(): Promise<void> {
    await this.ingests.closeAll();
    await this.runtime.stop();
    await this.writes.stop();
  }
}

function missingRunner(): never {
  throw new Error('cluster: a query came before the partial route was registered');
}

function missingApplier(): never {
  throw new Error('cluster: a delivery came before the write path was built');
}
