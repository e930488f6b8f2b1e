// Where the data lives and who else answers for it, as the routes see it: a single node, a Kafka
// replica (a single node fed by another's mirror topic) or a cluster member. The routes call
// this one interface and never ask which it is; the composition root (src/server-http.ts) picks
// the implementation: localTopology below, or the cluster's (src/cluster/node.ts).
import type { BitDepths } from '../encoding/schema-json.js';
import type { Engine } from '../engine/engine.js';
import { maxShards } from '../executor/max-shards.js';
import { KeyService } from '../service/key-service.js';
import { FrameService } from '../service/legacy/frame-service.js';
import type { ImportService } from '../service/import/import-service.js';
import type { ProtobufForwarder } from '../service/import/import-types.js';
import type { InputApi } from '../service/legacy/input-service.js';
import { LegacyImportService } from '../service/legacy/legacy-import.js';

export interface NodeInfo {
  id: string;
  scheme: string;
  host: string;
  port: number;
}

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

/** A node in Pilosa 1.4's shape (/status, /internal/nodes, /internal/fragment/nodes). */
export type PilosaNodeJson = { [k: string]: string | boolean | { [k: string]: string | number } };

export type MaxShardsJson = { [index: string]: number };

/** GET /export of one shard: `local`, `waitFor` are the arguments members send each other. */
export interface ShardExport {
  index: string;
  field: string;
  shard: number;
  local: boolean;
  waitFor: string | undefined;
}

export interface Topology {
  readonly kind: 'single' | 'replica' | 'cluster';
  /** Every member, Pilosa-shaped (/internal/nodes, /hosts). */
  nodes(): PilosaNodeJson[];
  /** The nodes holding shard `shard` of `index` (/internal/fragment/nodes, /fragment/nodes). */
  shardNodes(index: string, shard: number): PilosaNodeJson[];
  /**
   * The largest shard of each index, standard and inverse views (/internal/shards/max,
   * /slices/max), given the request's query arguments (a member asks with ?local=true).
   */
  shardsMax(query: Record<string, string | undefined>): Promise<{ standard: MaxShardsJson; inverse?: MaxShardsJson }>;
  /** Int fields' bit depths when other members know larger ones (undefined: this node's). */
  bitDepths(): Promise<BitDepths | undefined>;
  /** After this node recalculated its caches: the other members recalculate theirs. */
  recalculateElsewhere(): Promise<void>;
  /**
   * Whether GET /export is answered by `exportShard` (a member fetching a holder's CSV) rather
   * than from this node's rows, and so takes the members' `local` and `waitFor` arguments.
   */
  readonly exportsThroughMembers: boolean;
  /** GET /export of a shard, from a caught-up holder of it (`own`: this node's CSV). */
  exportShard(req: ShardExport, own: () => Promise<string>): Promise<string>;
  /** 0.x frame writes. */
  readonly frames: FrameApi;
  /** 0.x /import-value. */
  readonly legacyImports: Pick<LegacyImportService, 'importValues'>;
  /** /internal/translate/keys. */
  readonly keys: Pick<KeyService, 'translate'>;
  /**
   * Sends a client's protobuf import body on undecoded (cluster mode: the holders decode and
   * validate it); undefined where the route decodes and imports it here.
   */
  readonly protobufForwarder?: ProtobufForwarder;
  /** 0.x input definitions when they are not this node's own InputService's (cluster mode: through Kafka). */
  readonly inputs?: InputApi;
}

/** Pilosa 1.4's Node for this node: a one-node cluster, its own coordinator. */
export function selfNodeJson(n: NodeInfo): PilosaNodeJson {
  return { id: n.id, uri: { scheme: n.scheme, host: n.host, port: n.port }, isCoordinator: true, state: 'READY' };
}

/** A single node or a replica: this node holds every shard and answers alone. */
export function localTopology(
  kind: 'single' | 'replica',
  engine: Engine,
  imports: Pick<ImportService, 'decideBits' | 'decideValues'>,
  node: () => NodeInfo,
): Topology {
  return {
    kind,
    nodes: () => [selfNodeJson(node())],
    shardNodes: () => [selfNodeJson(node())],
    shardsMax: async () => engine.read((h) => ({ standard: maxShards(h), inverse: maxShards(h, true) })),
    bitDepths: async () => undefined,
    recalculateElsewhere: async () => undefined,
    exportsThroughMembers: false,
    exportShard: (_req, own) => own(),
    frames: new FrameService(engine),
    legacyImports: new LegacyImportService(engine, imports),
    keys: new KeyService(engine),
  };
}
