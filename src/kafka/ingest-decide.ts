// The state changes of Kafka-fed ingests as deciders (Engine.commit), shared by the single node's
// IngestManager and cluster mode's meta commands (src/cluster/ingest), so a definition, a start,
// a stop, a delete and a batch's offsets change every node's state exactly as they change one.
import { conflict, notFound } from '../domain/errors.js';
import type { Event, EventSink } from '../events/types.js';
import type { ReadonlyHolder, ReadonlyIngestState } from '../state/readonly.js';
import type { IngestPartitionStatus, IngestRunStatus } from './ingest-runner.js';
import { type IngestSpec, validateAgainstSchema } from './ingest-spec.js';

export interface IngestStatus {
  name: string;
  definition: IngestSpec;
  /** As stored: stopped over HTTP, or meant to run. */
  paused: boolean;
  /** Totals over the ingest's whole life, counted exactly once (from the state). */
  records: number;
  deadLettered: number;
  partitions: IngestPartitionStatus[];
  lag: number;
  run: IngestRunStatus;
}

/** What the /ingest routes ask of a node's ingests (one node's, or the cluster's). */
export interface IngestApi {
  define(name: string, body: unknown): Promise<IngestStatus>;
  remove(name: string): Promise<void>;
  setRunning(name: string, run: boolean): Promise<IngestStatus>;
  list(): string[];
  /** Status with lag measured against the partitions' current ends (asks the broker). */
  inspect(name: string): Promise<IngestStatus>;
  /** Status from what this node knows now (no broker round trip). */
  status(name: string): IngestStatus;
  startAll(): void;
  closeAll(): Promise<void>;
}

export function decideDefine(h: ReadonlyHolder, sink: EventSink, name: string, spec: IngestSpec): void {
  if (h.ingests.has(name)) throw conflict(`ingest ${name} already exists`);
  validateAgainstSchema(spec, h);
  sink.emit({ type: 'IngestDefined', name, spec: JSON.stringify(spec), paused: false });
}

export function decideDelete(h: ReadonlyHolder, sink: EventSink, name: string): void {
  if (!h.ingests.has(name)) throw notFound(`ingest ${name} not found`);
  sink.emit({ type: 'IngestDeleted', name });
}

/** Start (`run`) or stop; a start checks the definition against the schema again. */
export function decideRunning(h: ReadonlyHolder, sink: EventSink, name: string, run: boolean): void {
  const ingest = h.ingests.get(name);
  if (ingest === undefined) throw notFound(`ingest ${name} not found`);
  if (ingest.paused === !run) return;
  if (run) validateAgainstSchema(JSON.parse(ingest.spec) as IngestSpec, h);
  sink.emit({ type: 'IngestDefined', name, spec: ingest.spec, paused: !run });
}

/** A batch's consumed offsets and counts (exactly-once totals). */
export function decideOffsets(
  h: ReadonlyHolder,
  sink: EventSink,
  e: Omit<Extract<Event, { type: 'KafkaOffsetsCommitted' }>, 'type'>,
): void {
  if (!h.ingests.has(e.ingest)) throw notFound(`ingest ${e.ingest} not found`);
  sink.emit({ type: 'KafkaOffsetsCommitted', ...e });
}

/** Each partition's stored offset against its end (`ends`, else the offset itself: no lag known). */
export function storedPartitions(
  stored: ReadonlyMap<number, string> | undefined,
  ends: ReadonlyMap<number, bigint> | undefined,
): IngestPartitionStatus[] {
  const all = new Set<number>([...(stored?.keys() ?? []), ...(ends?.keys() ?? [])]);
  return [...all]
    .sort((a, b) => a - b)
    .map((partition) => {
      const offset = BigInt(stored?.get(partition) ?? '0');
      const hw = ends?.get(partition) ?? offset;
      return {
        partition,
        offset: String(offset),
        highWatermark: String(hw),
        lag: hw > offset ? Number(hw - offset) : 0,
      };
    });
}

/** An ingest's status from its state, its partitions and how it runs. */
export function ingestStatus(
  name: string,
  ingest: ReadonlyIngestState,
  partitions: IngestPartitionStatus[],
  run: IngestRunStatus,
): IngestStatus {
  return {
    name,
    definition: JSON.parse(ingest.spec) as IngestSpec,
    paused: ingest.paused,
    records: ingest.records,
    deadLettered: ingest.deadLettered,
    partitions,
    lag: partitions.reduce((a, p) => a + p.lag, 0),
    run,
  };
}

/** The run status of an ingest nothing runs here. */
export function notRunning(lastError?: string): IngestRunStatus {
  return {
    state: 'stopped',
    recordsPerSec: 0,
    importedThisRun: 0,
    deadLetteredThisRun: 0,
    deadLetterRateWarnings: 0,
    transientErrors: 0,
    ...(lastError !== undefined ? { lastError } : {}),
  };
}
