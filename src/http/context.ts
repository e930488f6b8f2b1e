// What routes need from the rest of the server (built by src/app.ts).
import type { BitDepths } from '../encoding/schema-json.js';
import type { Engine } from '../engine/engine.js';
import type { SchemaService } from '../service/schema-service.js';
import type { QueryService } from '../service/query-service.js';
import type { ImportService } from '../service/import/import-service.js';
import type { LegacyRelease } from '../service/legacy/legacy-release.js';
import type { KeyService } from '../service/key-service.js';
import type { FrameService } from '../service/legacy/frame-service.js';
import type { LegacyImportService } from '../service/legacy/legacy-import.js';

export interface NodeInfo {
  id: string;
  scheme: string;
  host: string;
  port: number;
}

/** What the routes call of each service: cluster mode passes versions that write through Kafka. */
export type SchemaApi = Pick<
  SchemaService,
  'createIndex' | 'deleteIndex' | 'createField' | 'deleteField' | 'applySchema'
>;
export type QueryApi = Pick<QueryService, 'execute' | 'executeAt'>;
export type ImportApi = Pick<
  ImportService,
  'importBits' | 'importValues' | 'importRoaring' | 'decideBits' | 'decideValues'
>;

export type FrameApi = Pick<
  FrameService,
  | 'createLegacyIndex'
  | 'createFrame'
  | 'deleteFrame'
  | 'setIndexTimeQuantum'
  | 'setFrameTimeQuantum'
  | 'createFrameField'
  | 'deleteFrameField'
  | 'frameFields'
>;

export interface HttpContext {
  engine: Engine;
  schema: SchemaApi;
  query: QueryApi;
  imports: ImportApi;
  node: () => NodeInfo;
  version: string;
  recalculateCaches: () => void;
  /** Extra /status fields (e.g. replica lag). The Kafka routes are registered by src/app.ts. */
  statusExtras?: () => Record<string, unknown>;
  /**
   * Cluster mode: the nodes holding shard `shard` of `index` (Pilosa's Node shape), for
   * /internal/fragment/nodes. Absent: this node holds every shard.
   */
  shardNodes?: (index: string, shard: number) => { [k: string]: string | boolean | { [k: string]: string | number } }[];
  /** Cluster mode: 0.x frame writes as meta commands (absent: this node's FrameService). */
  frames?: FrameApi;
  /** Cluster mode: 0.x /import-value through the cluster's imports. */
  legacyImports?: Pick<LegacyImportService, 'importValues'>;
  /** Cluster mode: /internal/translate/keys through the cluster's meta topic. */
  keys?: Pick<KeyService, 'translate'>;
  /** Cluster mode: every member, Pilosa-shaped (/internal/nodes, /hosts). */
  clusterNodes?: () => { [k: string]: string | boolean | { [k: string]: string | number } }[];
  /** Cluster mode: GET /export of a shard, from a caught-up holder of it (`own`: this node's CSV). */
  exportShard?: (
    req: { index: string; field: string; shard: number; local: boolean; waitFor: string | undefined },
    own: () => Promise<string>,
  ) => Promise<string>;
  /** Cluster mode: asks every other member to recalculate its caches too. */
  recalculateEverywhere?: () => Promise<void>;
  /** Cluster mode: int fields' bit depths over every member (listings show the largest). */
  bitDepths?: () => Promise<BitDepths>;
  /** Cluster mode: GET /internal/shards/max over every member (given the request's query arguments). */
  shardsMax?: (
    query: Record<string, string | undefined>,
  ) => Promise<{ standard: { [index: string]: number }; inverse?: { [index: string]: number } }>;
  /** --legacy-release: answer as this 0.x release (absent or '': every spelling). */
  legacyRelease?: LegacyRelease;
}
