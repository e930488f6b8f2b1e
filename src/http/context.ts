// What routes need from the rest of the server (built by src/app.ts).
import type { Engine } from '../engine/engine.js';
import type { SchemaService } from '../service/schema-service.js';
import type { QueryService } from '../service/query-service.js';
import type { ImportService } from '../service/import/import-service.js';
import type { LegacyRelease } from '../service/legacy/legacy-release.js';
import type { NodeInfo, Topology } from './topology.js';

export type { FrameApi, NodeInfo } from './topology.js';

/** What the routes call of each service: cluster mode passes versions that write through Kafka. */
export type SchemaApi = Pick<
  SchemaService,
  'createIndex' | 'deleteIndex' | 'createField' | 'deleteField' | 'applySchema'
>;
/** A query's answer; `stale` (cluster --cluster-stale-reads): answered without the broker, and why. */
export type QueryAnswer = Awaited<ReturnType<QueryService['execute']>> & { stale?: string };
export interface QueryApi {
  execute(...args: Parameters<QueryService['execute']>): Promise<QueryAnswer>;
  /** execute answering a small read in the same turn (QueryService.executeNow); absent: execute. */
  executeNow?(...args: Parameters<QueryService['executeNow']>): QueryAnswer | Promise<QueryAnswer>;
  executeAt(...args: Parameters<QueryService['executeAt']>): Promise<QueryAnswer>;
}
export type ImportApi = Pick<
  ImportService,
  'importBits' | 'importValues' | 'importRoaring' | 'decideBits' | 'decideValues'
>;

export interface HttpContext {
  engine: Engine;
  schema: SchemaApi;
  query: QueryApi;
  imports: ImportApi;
  node: () => NodeInfo;
  version: string;
  recalculateCaches: () => void;
  /**
   * /status beyond the node list: Kafka's figures, readiness and, in cluster mode, the members
   * and the cluster's state (composed by src/server-http.ts).
   */
  statusExtras: () => Record<string, unknown>;
  /** Single node, replica or cluster member: what the routes ask of where the data lives. */
  topology: Topology;
  /** --legacy-release: answer as this 0.x release (absent or '': every spelling). */
  legacyRelease?: LegacyRelease;
}
