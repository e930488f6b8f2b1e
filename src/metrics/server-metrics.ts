// Prometheus metrics for one server (GET /metrics). Hot paths pay one histogram observe per
// request and per group commit; everything else (log, snapshot, Kafka, index sizes) is read from
// the components' own figures when Prometheus scrapes, so an unscraped server pays nothing.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Engine } from '../engine/engine.js';
import { type IndexFootprint, indexFootprints } from './index-footprint.js';
import { systemClock } from '../util/clock.js';
import { TalliedHistogram } from './tallied-histogram.js';

/**
 * What the metrics read of the Kafka runtime (src/kafka), described here so that metrics/ stays
 * below kafka/ and http/ in the layers: the composition root passes the runtime itself.
 */
export interface KafkaFigures {
  readonly mirror?: { readonly healthy: boolean; status(): { lagRecords: number } };
  readonly replica?: { status(): { lagMessages: number; state: string } };
  readonly ingests: { list(): string[]; status(name: string): { lag: number } };
}

/** What the metrics read of the query worker pool (src/service/query-workers/pool.ts). */
export interface QueryWorkerFigures {
  readonly size: number;
  readonly usable: boolean;
  readonly stats: {
    readonly jobs: number;
    readonly failed: number;
    readonly cancelled: number;
    readonly sharedHere: number;
    readonly stateMoved: number;
  };
  load(): { queued: number; busySeconds: number }[];
}

export interface MetricsSources {
  engine: Engine;
  kafka: KafkaFigures;
  /** None with --query-workers 1 and in cluster mode: then the workers' figures read 0. */
  queryWorkers?: QueryWorkerFigures;
}

export interface ReplayProgress {
  phase: 'snapshot' | 'replay' | 'done';
  done: number;
  total: number;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class ServerMetrics {
  readonly registry = new Registry();
  readonly replay: ReplayProgress = { phase: 'snapshot', done: 0, total: 0 };
  private sources: MetricsSources | undefined;

  /** The sources once attached (scrape-time figures outside the class read them). */
  get sourcesNow(): MetricsSources | undefined {
    return this.sources;
  }
  private readonly requests: TalliedHistogram<'method' | 'route' | 'status'>;
  private readonly pql: TalliedHistogram<'call'>;
  private readonly errors: Counter<'status'>;
  readonly groupCommitRecords: Histogram;
  readonly fsyncSeconds: Histogram;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new TalliedHistogram({
      name: 'bitledger_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.pql = new TalliedHistogram({
      name: 'bitledger_pql_request_duration_seconds',
      help: 'Query requests by their first PQL call',
      labelNames: ['call'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.errors = new Counter({
      name: 'bitledger_http_errors_total',
      help: 'HTTP answers with status >= 400, by status',
      labelNames: ['status'],
      registers,
    });
    this.groupCommitRecords = new Histogram({
      name: 'bitledger_group_commit_records',
      help: 'Records per group commit (one log append)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096, 16384, 50000],
      registers,
    });
    this.fsyncSeconds = new Histogram({
      name: 'bitledger_log_append_duration_seconds',
      help: 'Duration of one log append including its fsync (per the fsync policy)',
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.scraped(registers);
  }

  /** Called once the engine exists; scrape-time figures read from these from then on. */
  attach(sources: MetricsSources): void {
    this.sources = sources;
    sources.engine.onCommit((records, ms) => {
      this.groupCommitRecords.observe(records);
      this.fsyncSeconds.observe(ms / 1000);
    });
  }

  observeRequest(method: string, route: string, status: number, ms: number): void {
    // A method and a status hold no space, so the key names one label set.
    const key = `${method} ${status} ${route}`;
    if (!this.requests.tally(key, ms / 1000)) this.requests.first(key, { method, route, status }, ms / 1000);
    if (status >= 400) this.errors.inc({ status });
  }

  /**
   * observeRequest for one method and route, each status's label-set key made once: a key built
   * per request is a new string, hashed again at each lookup.
   */
  routeRequests(method: string, route: string): (status: number, ms: number) => void {
    const keys = new Map<number, string>();
    return (status, ms) => {
      let key = keys.get(status);
      if (key === undefined) {
        key = `${method} ${status} ${route}`;
        keys.set(status, key);
      }
      if (!this.requests.tally(key, ms / 1000)) this.requests.first(key, { method, route, status }, ms / 1000);
      if (status >= 400) this.errors.inc({ status });
    };
  }

  observePql(call: string, ms: number): void {
    if (!this.pql.tally(call, ms / 1000)) this.pql.first(call, { call }, ms / 1000);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The figures read when Prometheus scrapes (SCRAPED), and those labelled by kind, ingest or index. */
  private scraped(registers: Registry[]): void {
    const m = this;
    this.startupFigures(registers);
    for (const f of SCRAPED) {
      const read = f.read;
      if (f.kind === 'gauge')
        new Gauge({
          name: f.name,
          help: f.help,
          registers,
          collect() {
            if (m.sources !== undefined) this.set(read(m.sources));
          },
        });
      else
        new Counter({
          name: f.name,
          help: f.help,
          registers,
          // Counted by its owner: re-based on each scrape from the owner's own counter.
          collect() {
            if (m.sources === undefined) return;
            this.reset();
            this.inc(read(m.sources));
          },
        });
    }
    this.labelledFigures(registers);
  }

  private startupFigures(registers: Registry[]): void {
    const m = this;
    new Gauge({
      name: 'bitledger_replay_records',
      help: 'Startup replay progress: records replayed (kind=done) of the log suffix to replay (kind=total)',
      labelNames: ['kind'],
      registers,
      collect() {
        this.set({ kind: 'done' }, m.replay.done);
        this.set({ kind: 'total' }, m.replay.total);
      },
    });
    new Gauge({
      name: 'bitledger_ready',
      help: '1 when the server has finished its startup replay',
      registers,
      collect() {
        this.set(m.sources === undefined ? 0 : 1);
      },
    });
  }

  private labelledFigures(registers: Registry[]): void {
    const m = this;
    new Gauge({
      name: 'bitledger_ingest_lag_records',
      help: 'Kafka records an ingest has not consumed yet',
      labelNames: ['ingest'],
      registers,
      collect() {
        this.reset();
        if (m.sources === undefined) return;
        for (const n of m.sources.kafka.ingests.list()) this.set({ ingest: n }, m.sources.kafka.ingests.status(n).lag);
      },
    });
    queryWorkerFigures(m, registers);
    for (const [name, what, pick] of [
      ['bitledger_index_bits', 'Bits set', (f: IndexFootprint) => f.bits],
      ['bitledger_index_bytes', 'Serialized roaring bytes', (f: IndexFootprint) => f.bytes],
    ] as const) {
      new Gauge({
        name,
        help: `${what} per index, all fields and views (a costly walk is reused for a while)`,
        labelNames: ['index'],
        registers,
        collect() {
          this.reset();
          if (m.sources === undefined) return;
          for (const f of m.sources.engine.peekApplied(indexFootprints)) this.set({ index: f.index }, pick(f));
        },
      });
    }
  }
}

/** Per query worker (label `worker`): jobs waiting or running, and seconds spent on jobs. */
function queryWorkerFigures(m: { readonly sourcesNow: MetricsSources | undefined }, registers: Registry[]): void {
  for (const [name, help, pick] of [
    ['bitledger_query_worker_queued_jobs', 'Jobs sent to a query worker and not answered yet', 'queued'],
    ['bitledger_query_worker_busy_seconds', 'Seconds a query worker spent running jobs since it started', 'busy'],
  ] as const)
    new Gauge({
      name,
      help,
      labelNames: ['worker'],
      registers,
      collect() {
        this.reset();
        const load = m.sourcesNow?.queryWorkers?.load() ?? [];
        load.forEach((l, i) => this.set({ worker: String(i) }, pick === 'queued' ? l.queued : l.busySeconds));
      },
    });
}

/**
 * One figure read from its owner at scrape time: a gauge, or a total its owner counts (a
 * Prometheus counter re-based on each scrape).
 */
interface ScrapedFigure {
  name: string;
  help: string;
  kind: 'gauge' | 'total';
  read(s: MetricsSources): number;
}

const SCRAPED: readonly ScrapedFigure[] = [
  {
    name: 'bitledger_log_sequence',
    help: 'Highest durable log sequence',
    kind: 'gauge',
    read: (s) => s.engine.logFigures().durableSeq,
  },
  {
    name: 'bitledger_log_first_sequence',
    help: 'Lowest retained log sequence',
    kind: 'gauge',
    read: (s) => s.engine.logFigures().firstSeq,
  },
  {
    name: 'bitledger_commit_queue_depth',
    help: 'Records applied in memory but not yet durable',
    kind: 'gauge',
    read: (s) => s.engine.logFigures().assignedSeq - s.engine.logFigures().durableSeq,
  },
  {
    name: 'bitledger_heap_trims_total',
    help: 'Times freed memory was returned to the kernel after bulk writes',
    kind: 'total',
    read: (s) => s.engine.trimFigures().trims,
  },
  {
    name: 'bitledger_heap_trimmed_bytes_total',
    help: 'Resident bytes returned to the kernel after bulk writes (RSS before minus after each trim)',
    kind: 'total',
    read: (s) => s.engine.trimFigures().releasedBytes,
  },
  {
    name: 'bitledger_log_appended_bytes_total',
    help: 'Bytes appended to the log since start',
    kind: 'total',
    read: (s) => s.engine.logFigures().commits.bytes,
  },
  {
    name: 'bitledger_log_appended_records_total',
    help: 'Records appended to the log since start',
    kind: 'total',
    read: (s) => s.engine.logFigures().commits.records,
  },
  {
    name: 'bitledger_group_commits_total',
    help: 'Log appends (group commits) since start',
    kind: 'total',
    read: (s) => s.engine.logFigures().commits.batches,
  },
  {
    name: 'bitledger_snapshots_total',
    help: 'Snapshots written since start',
    kind: 'total',
    read: (s) => s.engine.snapshots.stats.count,
  },
  {
    name: 'bitledger_snapshot_sequence',
    help: 'Sequence of the last snapshot written since start (0: none yet)',
    kind: 'gauge',
    read: (s) => s.engine.snapshots.stats.lastSeq,
  },
  {
    name: 'bitledger_snapshot_last_duration_seconds',
    help: 'Duration of the last snapshot',
    kind: 'gauge',
    read: (s) => s.engine.snapshots.stats.lastMs / 1000,
  },
  {
    name: 'bitledger_snapshot_last_bytes',
    help: 'Size of the last snapshot',
    kind: 'gauge',
    read: (s) => s.engine.snapshots.stats.lastBytes,
  },
  {
    name: 'bitledger_snapshot_age_seconds',
    help: 'Seconds since the last snapshot written since start (-1: none yet)',
    kind: 'gauge',
    read: (s) => {
      const at = s.engine.snapshots.stats.lastAt;
      return at === 0 ? -1 : (systemClock.now() - at) / 1000;
    },
  },
  {
    name: 'bitledger_query_workers',
    help: 'Query worker threads running jobs (0: queries run on the request thread)',
    kind: 'gauge',
    read: (s) => (s.queryWorkers?.usable === true ? s.queryWorkers.size : 0),
  },
  {
    name: 'bitledger_query_worker_jobs_total',
    help: 'Jobs sent to query workers (one per worker share of a query phase)',
    kind: 'total',
    read: (s) => s.queryWorkers?.stats.jobs ?? 0,
  },
  {
    name: 'bitledger_query_worker_failed_jobs_total',
    help: 'Query worker jobs that ended in an error (deadlines and cancels included)',
    kind: 'total',
    read: (s) => s.queryWorkers?.stats.failed ?? 0,
  },
  {
    name: 'bitledger_query_worker_cancelled_jobs_total',
    help: 'Query worker jobs whose client went away while they ran',
    kind: 'total',
    read: (s) => s.queryWorkers?.stats.cancelled ?? 0,
  },
  {
    name: 'bitledger_query_worker_shared_phases_total',
    help: 'Query phases whose first share the request thread computed while the workers were idle',
    kind: 'total',
    read: (s) => s.queryWorkers?.stats.sharedHere ?? 0,
  },
  {
    name: 'bitledger_query_worker_state_moved_total',
    help: 'Shared query phases a write ended (the workers then answered the whole query)',
    kind: 'total',
    read: (s) => s.queryWorkers?.stats.stateMoved ?? 0,
  },
  {
    name: 'bitledger_mirror_lag_records',
    help: 'Durable records not yet acknowledged by the Kafka mirror topic',
    kind: 'gauge',
    read: (s) => s.kafka.mirror?.status().lagRecords ?? 0,
  },
  {
    name: 'bitledger_mirror_failed',
    help: '1 when the Kafka mirror is failing (retrying)',
    kind: 'gauge',
    read: (s) => (s.kafka.mirror !== undefined && !s.kafka.mirror.healthy ? 1 : 0),
  },
  {
    name: 'bitledger_replica_lag_messages',
    help: 'Mirror-topic messages a replica has not applied yet',
    kind: 'gauge',
    read: (s) => s.kafka.replica?.status().lagMessages ?? 0,
  },
  {
    name: 'bitledger_replica_failed',
    help: '1 when this replica stopped following after an error',
    kind: 'gauge',
    read: (s) => (s.kafka.replica?.status().state === 'failed' ? 1 : 0),
  },
];
