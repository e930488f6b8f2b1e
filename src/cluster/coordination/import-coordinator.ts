// Imports in cluster mode (the ImportService the routes call). A client's per-shard protobuf body
// of IDs is forwarded undecoded (forwardProtobuf) and validated by the holders that apply it.
// Any other request (keys, JSON, Kafka ingest, 0.x input definitions) is validated here
// with the single node's own rules — ImportService.decideBits/decideValues run against this
// node's state with a sink that stops them at their first event, which comes only after all
// validation — so a bad import is refused before anything is sent. Keys without IDs go through
// the meta topic first (a clear never assigns keys: pairs naming unknown keys are dropped, as one
// node drops them). The items are then split by the shard of their column, and each shard's
// part is one import command to its partition, all in one Kafka transaction when there are
// several. The answer comes once Kafka has them: each holder applies the same validated request.
import { DomainError, badRequest } from '../../domain/errors.js';
import { fieldNotFoundNamed, indexNotFoundNamed } from '../../domain/messages.js';
import type { WideIdArray } from '../../domain/id-array.js';
import { shardOf } from '../../domain/shard.js';
import type { Engine } from '../../engine/engine.js';
import { encodeImportRequest, encodeImportValueRequest } from '../../encoding/import-request-encode.js';
import type { EventSink } from '../../events/types.js';
import {
  type BitsImport,
  ImportService,
  type RoaringImport,
  type ValuesImport,
} from '../../service/import/import-service.js';
import type { ProtobufImport } from '../../service/import/import-types.js';
import type { LogCommand } from '../commands/command.js';
import type { ClusterWrites } from './cluster-writes.js';
import { missingKeys } from './write-keys.js';
import type { ReadonlyHolder, ReadonlyIndex } from '../../state/readonly.js';

const STOP = Symbol('validated');
/** A sink that ends a decide at its first event: by then the request passed every check. */
const STOP_SINK: EventSink = {
  emit: () => {
    throw STOP;
  },
};

export class ClusterImportService {
  private readonly local: ImportService;

  constructor(
    private readonly engine: Engine,
    private readonly writes: ClusterWrites,
  ) {
    this.local = new ImportService(engine);
  }

  async importBits(req: BitsImport): Promise<void> {
    await this.send(await this.commandsForBits(req));
  }

  async importValues(req: ValuesImport): Promise<void> {
    await this.send(await this.commandsForValues(req));
  }

  /**
   * A client's per-shard protobuf import of IDs (no key to translate) goes as it is, undecoded:
   * its body is the command, sent to its shard's partition, and the holders validate it as they
   * apply it — a single node's rules and errors, where a column outside the named shard is
   * refused too. The answer is the first holder's outcome (its 4xx is the client's). False for a
   * field or index with keys: the route decodes the body and importBits/importValues translate.
   */
  async forwardProtobuf(req: ProtobufImport): Promise<boolean> {
    const plain = this.engine.peekApplied((h) => {
      const idx = h.index(req.index);
      const f = idx?.field(req.field);
      return idx !== undefined && !idx.options.keys && f !== undefined && (req.format === 'values' || !f.options.keys);
    });
    if (!plain) return false;
    // The acknowledgment's hold (reads/cluster-ends.ts) runs beside the wait for the holder.
    await this.writes.logResults([this.command(req.index, req.field, req.shard, req.format, req.clear, req.encoded)]);
    return true;
  }

  /**
   * The log commands of a bits import, one per shard, once it is validated and its keys have IDs
   * (a Kafka-fed ingest sends them in its own transaction).
   */
  async commandsForBits(req: BitsImport): Promise<LogCommand[]> {
    this.validate((h) => this.local.decideBits(h, STOP_SINK, req));
    const { index, field, clear } = req;
    const keyed = this.keyed(index, field);
    if (!clear && (keyed.columns || keyed.rows))
      await this.assign(index, keyed.columns ? req.columnKeys : [], keyed.rows ? [{ field, keys: req.rowKeys }] : []);
    const cols = this.columnIds(index, req.columnIds, keyed.columns ? req.columnKeys : undefined);
    const rowKnown = keyed.rows ? this.knownRows(index, field, req.rowKeys) : undefined;
    const parts = byShard(cols, (i) => rowKnown === undefined || rowKnown[i]);
    const commands: LogCommand[] = [];
    for (const [shard, at] of parts) {
      const pick = <T>(a: ArrayLike<T>): T[] => at.map((i) => a[i]);
      const body = encodeImportRequest({
        index,
        field,
        shard,
        ...(keyed.rows ? { rowKeys: pick(req.rowKeys) } : { rowIds: pick(req.rowIds) }),
        ...(keyed.columns ? { columnKeys: pick(req.columnKeys) } : { columnIds: pick<number | bigint>(req.columnIds) }),
        ...(req.timestamps !== null ? { timestamps: pick(req.timestamps) } : {}),
      });
      commands.push(this.command(index, field, shard, 'bits', clear, body));
    }
    return commands;
  }

  /** The log commands of an int-values import, as commandsForBits. */
  async commandsForValues(req: ValuesImport): Promise<LogCommand[]> {
    this.validate((h) => this.local.decideValues(h, STOP_SINK, req));
    const { index, field, clear } = req;
    const keyed = this.keyed(index, field);
    if (!clear && keyed.columns) await this.assign(index, req.columnKeys, []);
    const cols = this.columnIds(index, req.columnIds, keyed.columns ? req.columnKeys : undefined);
    const commands: LogCommand[] = [];
    for (const [shard, at] of byShard(cols, () => true)) {
      const pick = <T>(a: ArrayLike<T>): T[] => at.map((i) => a[i]);
      const body = encodeImportValueRequest({
        index,
        field,
        shard,
        ...(keyed.columns ? { columnKeys: pick(req.columnKeys) } : { columnIds: pick<number | bigint>(req.columnIds) }),
        ...(clear ? {} : { values: pick(req.values) }),
      });
      commands.push(this.command(index, field, shard, 'values', clear, body));
    }
    return commands;
  }

  async importRoaring(req: RoaringImport): Promise<void> {
    this.engine.peekApplied((h) => {
      const idx = h.index(req.index);
      if (!idx) throw indexNotFoundNamed(req.index);
      const f = idx.field(req.field);
      if (!f) throw fieldNotFoundNamed(req.field);
      if (f.options.type !== 'set' && f.options.type !== 'time')
        throw badRequest('roaring import is only supported for set and time fields');
    });
    const body = Buffer.concat(req.views.map((v) => v.data));
    const cmd = this.command(req.index, req.field, req.shard, 'roaring', req.clear, body);
    if (cmd.kind === 'import') {
      cmd.views = req.views.map((v) => v.view);
      cmd.viewBytes = req.views.map((v) => v.data.byteLength);
    }
    await this.send([cmd]);
  }

  /** Kafka ingest and the legacy input definitions decide imports inside local writes: not here. */
  decideBits(_h: ReadonlyHolder, _sink: EventSink, _req: BitsImport): void {
    throw notInCluster();
  }

  decideValues(_h: ReadonlyHolder, _sink: EventSink, _req: ValuesImport): void {
    throw notInCluster();
  }

  private validate(decide: (h: ReadonlyHolder) => void): void {
    try {
      this.engine.peekApplied(decide);
    } catch (err) {
      if (err !== STOP) throw err;
    }
  }

  private keyed(index: string, field: string): { columns: boolean; rows: boolean } {
    return this.engine.peekApplied((h) => {
      const idx = h.index(index) as ReadonlyIndex;
      return { columns: idx.options.keys, rows: idx.field(field)?.options.keys === true };
    });
  }

  private async assign(index: string, columns: string[], rows: { field: string; keys: string[] }[]): Promise<void> {
    const missing = this.engine.peekApplied((h) =>
      missingKeys(h.index(index) as ReadonlyIndex, { columns, rows: new Map(rows.map((r) => [r.field, r.keys])) }),
    );
    if (missing !== undefined) await this.writes.meta({ kind: 'keys', index, ...missing });
  }

  /** Column IDs (from the keys when the index has keys; -1 for a key never assigned). */
  private columnIds(index: string, ids: WideIdArray, keys: string[] | undefined): WideIdArray {
    if (keys === undefined) return ids;
    return this.engine.peekApplied((h) => {
      const t = (h.index(index) as ReadonlyIndex).columnKeys;
      return Float64Array.from(keys, (k) => t.id(k) ?? -1);
    });
  }

  private knownRows(index: string, field: string, keys: string[]): boolean[] {
    return this.engine.peekApplied((h) => {
      const t = (h.index(index) as ReadonlyIndex).rowKeys.get(field);
      return keys.map((k) => t?.id(k) !== undefined);
    });
  }

  private command(
    index: string,
    field: string,
    shard: number,
    format: 'bits' | 'values' | 'roaring',
    clear: boolean,
    body: Uint8Array,
  ): LogCommand {
    return {
      kind: 'import',
      index,
      field,
      shard,
      format,
      clear,
      body,
      partition: this.writes.view.partitionOf(index, shard),
      metaOffset: this.writes.metaOffset(),
    };
  }

  private async send(commands: LogCommand[]): Promise<void> {
    if (commands.length > 0) await this.writes.log(commands);
  }
}

/** Item indices by the shard of their column; items with an unknown key (-1) or `keep` false are left out. */
function byShard(cols: WideIdArray, keep: (i: number) => boolean): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (let i = 0; i < cols.length; i++) {
    const c = cols[i];
    if (c === -1 || !keep(i)) continue;
    const s = shardOf(c);
    let l = out.get(s);
    if (l === undefined) out.set(s, (l = []));
    l.push(i);
  }
  return out;
}

function notInCluster(): DomainError {
  return new DomainError(
    'method_not_allowed',
    'not supported in cluster mode yet: this write runs inside a local write (Kafka ingest, legacy input definitions)',
  );
}
