// Kafka-fed ingests in cluster mode (the IngestApi the /ingest routes call; docs/CLUSTER.md,
// "Kafka-fed ingest"). A definition, a start, a stop and a delete at any node are meta commands:
// every node applies them to its state and then starts or stops its own runner, so every running
// node is a member of the ingest's consumer group. Offsets and exactly-once totals are in every
// node's state (ingestOffsets commands); GET /ingest/{name} adds the lag against the source
// topic's ends and each member's share (rate, partitions) from the members themselves.
import type { FastifyInstance } from 'fastify';
import type { Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { notFound } from '../../domain/errors.js';
import type { Engine } from '../../engine/engine.js';
import { lazyProducer } from '../../kafka/dead-letters.js';
import {
  type IngestApi,
  type IngestStatus,
  ingestStatus,
  notRunning,
  storedPartitions,
} from '../../kafka/ingest-decide.js';
import type { IngestRunStatus } from '../../kafka/ingest-runner.js';
import { parseIngestSpec, type IngestSpec } from '../../kafka/ingest-spec.js';
import type { ReadonlyIngestState } from '../../state/readonly.js';
import type { CommandApplier } from '../commands/applier.js';
import type { ClusterWrites } from '../coordination/cluster-writes.js';
import type { ClusterImportService } from '../coordination/import-coordinator.js';
import { ClusterIngestRunner, type MemberIngestStatus } from './runner.js';

export const INGEST_STATUS_PATH = '/internal/cluster/ingest';

export interface ClusterIngestParts {
  engine: Engine;
  kafka: Kafka;
  writes: ClusterWrites;
  imports: ClusterImportService;
  applier: CommandApplier;
  chunkBytes?: number;
  logger: Logger;
}

/** The cluster's view of an ingest: the state's, plus each member's share. */
export type ClusterIngestStatus = IngestStatus & { members: ({ id: string } & Partial<MemberIngestStatus>)[] };

export class ClusterIngests implements IngestApi {
  private readonly runners = new Map<string, { json: string; runner: ClusterIngestRunner }>();
  private readonly dlq: ReturnType<typeof lazyProducer>;
  /** startAll() was asked (KafkaRuntime.start); runners start once the node has joined (begin()). */
  private wanted = false;
  private began = false;
  private closed = false;

  constructor(private readonly parts: ClusterIngestParts) {
    this.dlq = lazyProducer(parts.kafka);
    parts.applier.ingestListeners.push((name) => this.follow(name));
  }

  startAll(): void {
    this.wanted = true;
    if (this.began) this.followAll();
  }

  /** The node joined the cluster and its producer runs: ingests may run here now. */
  begin(): void {
    this.began = true;
    if (this.wanted) this.followAll();
  }

  async closeAll(): Promise<void> {
    this.closed = true;
    const all = [...this.runners.values()];
    this.runners.clear();
    await Promise.all(all.map((r) => r.runner.stop()));
    await this.dlq.close();
  }

  async define(name: string, body: unknown): Promise<IngestStatus> {
    const spec = parseIngestSpec(name, body);
    await this.parts.writes.meta({ kind: 'ingest', op: 'define', name, spec });
    return this.status(name);
  }

  async remove(name: string): Promise<void> {
    this.find(name);
    await this.parts.writes.meta({ kind: 'ingest', op: 'delete', name });
  }

  async setRunning(name: string, run: boolean): Promise<IngestStatus> {
    this.find(name);
    const failed = this.runners.get(name)?.runner.status().state === 'failed';
    // A failed runner is replaced: starting again is how an operator retries after a fix.
    if (run && failed) await this.stopRunner(name);
    await this.parts.writes.meta({ kind: 'ingest', op: run ? 'start' : 'stop', name });
    if (run) this.follow(name);
    return this.status(name);
  }

  list(): string[] {
    return this.parts.engine.peekApplied((h) => [...h.ingests.keys()].sort());
  }

  status(name: string): IngestStatus {
    const ingest = this.find(name);
    const spec = JSON.parse(ingest.spec) as IngestSpec;
    const own = this.runners.get(name)?.runner.status();
    const ends = own === undefined ? undefined : endsOf([own]);
    const partitions = storedPartitions(ingest.offsets.get(spec.topic), ends);
    return ingestStatus(name, ingest, partitions, own ?? notRunning());
  }

  /** The whole cluster: lag against the topic's ends now, and every member's share. */
  async inspect(name: string): Promise<ClusterIngestStatus> {
    const ingest = this.find(name);
    const spec = JSON.parse(ingest.spec) as IngestSpec;
    const members = await this.memberStatuses(name);
    let ends = endsOf(members);
    try {
      ends = await topicEnds(this.parts.kafka, spec.topic);
    } catch {
      // Broker away: the ends the members saw last.
    }
    const partitions = storedPartitions(ingest.offsets.get(spec.topic), ends);
    return { ...ingestStatus(name, ingest, partitions, combined(members)), members };
  }

  /** GET /internal/cluster/ingest/{name}: this node's share of an ingest. */
  routes(app: FastifyInstance): void {
    app.get<{ Params: { name: string } }>(`${INGEST_STATUS_PATH}/:name`, async (req, reply) => {
      this.find(req.params.name);
      const own: Partial<MemberIngestStatus> = this.runners.get(req.params.name)?.runner.status() ?? notRunning();
      return reply.type('application/json').send(JSON.stringify(own));
    });
  }

  private async memberStatuses(name: string): Promise<ClusterIngestStatus['members']> {
    const view = this.parts.writes.view;
    const members = view.map()?.members ?? [view.self];
    return Promise.all(
      members.map(async (m) => {
        if (m.id === view.self.id) return { id: m.id, ...(this.runners.get(name)?.runner.status() ?? notRunning()) };
        try {
          const res = await view.memberFetch(`${m.url}${INGEST_STATUS_PATH}/${encodeURIComponent(name)}`, {
            signal: AbortSignal.timeout(5_000),
          });
          if (!res.ok) return { id: m.id, lastError: `answered ${res.status}` };
          return { id: m.id, ...((await res.json()) as MemberIngestStatus) };
        } catch (err) {
          return { id: m.id, lastError: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  }

  private followAll(): void {
    for (const name of new Set([...this.list(), ...this.runners.keys()])) this.follow(name);
  }

  /** Makes this node's runner of `name` match the state: running unless stopped or deleted. */
  private follow(name: string): void {
    if (!this.began || !this.wanted || this.closed) return;
    const ingest = this.parts.engine.peekApplied((h) => h.ingests.get(name));
    const have = this.runners.get(name);
    if (ingest === undefined || ingest.paused || (have !== undefined && have.json !== ingest.spec)) {
      void this.stopRunner(name).then(() => {
        if (ingest !== undefined && !ingest.paused) this.follow(name);
      });
      return;
    }
    if (have !== undefined) return;
    const spec = JSON.parse(ingest.spec) as IngestSpec;
    const { engine, kafka, writes, imports, chunkBytes } = this.parts;
    const runner = new ClusterIngestRunner(
      {
        engine,
        kafka,
        writes,
        imports,
        deadLetters: () => this.dlq.get(),
        ...(chunkBytes !== undefined ? { chunkBytes } : {}),
        logger: this.parts.logger.child({ ingest: name }),
      },
      name,
      spec,
    );
    this.runners.set(name, { json: ingest.spec, runner });
    runner.start();
  }

  private async stopRunner(name: string): Promise<void> {
    const r = this.runners.get(name);
    this.runners.delete(name);
    await r?.runner.stop();
  }

  private find(name: string): ReadonlyIngestState {
    const ingest = this.parts.engine.peekApplied((h) => h.ingests.get(name));
    if (ingest === undefined) throw notFound(`ingest ${name} not found`);
    return ingest;
  }
}

/** The ends the members last fetched, per partition (the highest). */
function endsOf(members: readonly Partial<Pick<MemberIngestStatus, 'highWatermarks'>>[]): Map<number, bigint> {
  const out = new Map<number, bigint>();
  for (const m of members)
    for (const [p, hw] of Object.entries(m.highWatermarks ?? {})) {
      const v = BigInt(hw);
      if (v > (out.get(Number(p)) ?? -1n)) out.set(Number(p), v);
    }
  return out;
}

async function topicEnds(kafka: Kafka, topic: string): Promise<Map<number, bigint>> {
  const admin = kafka.admin();
  try {
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(topic);
    return new Map(offsets.map((o) => [o.partition, BigInt(o.high)]));
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** The cluster's run: running where any member runs it; rates and counts summed. */
function combined(members: readonly Partial<MemberIngestStatus>[]): IngestRunStatus {
  const states = members.map((m) => m.state);
  const state: IngestRunStatus['state'] = states.includes('running')
    ? 'running'
    : states.includes('starting')
      ? 'starting'
      : states.includes('failed')
        ? 'failed'
        : 'stopped';
  const sum = (
    k: 'recordsPerSec' | 'importedThisRun' | 'deadLetteredThisRun' | 'deadLetterRateWarnings' | 'transientErrors',
  ) => members.reduce((a, m) => a + (m[k] ?? 0), 0);
  const lastError = members.find((m) => m.lastError !== undefined)?.lastError;
  return {
    state,
    recordsPerSec: sum('recordsPerSec'),
    importedThisRun: sum('importedThisRun'),
    deadLetteredThisRun: sum('deadLetteredThisRun'),
    deadLetterRateWarnings: sum('deadLetterRateWarnings'),
    transientErrors: sum('transientErrors'),
    ...(lastError !== undefined ? { lastError } : {}),
  };
}
