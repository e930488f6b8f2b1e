// 0.x writes in cluster mode: frame writes (service/legacy/frame-service.ts) as `frame` meta
// commands that every node applies through its own FrameService, and 0.x /import-value, whose
// frame int field is named from this node's schema and then imported as any value import.
import { DomainError, badRequest } from '../../domain/errors.js';
import { validateName } from '../../domain/names.js';
import type { IndexOptions } from '../../domain/types.js';
import type { Engine } from '../../engine/engine.js';
import type { QueryResponse } from '../../executor/result.js';
import type { ValuesImport } from '../../service/import/import-service.js';
import type { FrameIntField, FrameOptionsInput } from '../../service/legacy/frame-options.js';
import { intFieldOptions, validateLabel } from '../../service/legacy/frame-options.js';
import { FrameService } from '../../service/legacy/frame-service.js';
import { resolveIntField } from '../../service/legacy/legacy-meta.js';
import type { FrameOp } from '../commands/command.js';
import type { ClusterImportService } from './import-coordinator.js';
import { ClusterInputService } from './input-coordinator.js';
import type { ClusterWrites } from './cluster-writes.js';

/** A read query over the cluster (ClusterQueryService.execute). */
type ClusterQuery = (index: string, pql: string) => Promise<QueryResponse>;

export class ClusterFrameService {
  private readonly local: FrameService;
  /** 0.x input definitions through the cluster (the topology gives them to the input routes: Topology.inputs). */
  readonly inputs: ClusterInputService;

  constructor(
    private readonly engine: Engine,
    private readonly writes: ClusterWrites,
    private readonly query: ClusterQuery,
  ) {
    this.local = new FrameService(engine);
    this.inputs = new ClusterInputService(engine, writes);
  }

  createLegacyIndex(
    index: string,
    options: IndexOptions,
    legacy: { columnLabel?: string; timeQuantum?: string },
  ): Promise<void> {
    validateName(index);
    if (legacy.columnLabel !== undefined) validateLabel(legacy.columnLabel, 'columnLabel');
    return this.run({ op: 'createLegacyIndex', index, options, legacy });
  }

  createFrame(index: string, frame: string, input: FrameOptionsInput): Promise<void> {
    validateName(frame);
    return this.run({ op: 'createFrame', index, frame, input });
  }

  deleteFrame(index: string, frame: string): Promise<void> {
    return this.run({ op: 'deleteFrame', index, frame });
  }

  setIndexTimeQuantum(index: string, quantum: string): Promise<void> {
    return this.run({ op: 'setIndexTimeQuantum', index, quantum });
  }

  /**
   * The frame must hold no bits anywhere in the cluster (asked here with one Rows() over every
   * holder: no holder can tell from its own shards); row attributes and keys every node checks.
   */
  async setFrameTimeQuantum(index: string, frame: string, quantum: string): Promise<void> {
    const kind = this.engine.peekApplied((h) => h.index(index)?.field(frame)?.options.type);
    if (kind === 'set' || kind === 'time') {
      const r = await this.query(index, `Rows(${frame}, limit=1)`);
      const rows = r.results[0];
      if (rows?.type === 'rowids' && (rows.rows.length > 0 || (rows.keys?.length ?? 0) > 0))
        throw badRequest(`the time quantum of frame ${frame} can only be changed while it holds no data`);
    }
    return this.run({ op: 'setFrameTimeQuantum', index, frame, quantum });
  }

  createFrameField(index: string, frame: string, field: FrameIntField): Promise<void> {
    intFieldOptions(frame, field); // its checks, before anything is sent
    return this.run({ op: 'createFrameField', index, frame, field });
  }

  deleteFrameField(index: string, frame: string, name: string): Promise<void> {
    return this.run({ op: 'deleteFrameField', index, frame, name });
  }

  frameFields(index: string, frame: string): ReturnType<FrameService['frameFields']> {
    return this.local.frameFields(index, frame);
  }

  private async run(frame: FrameOp): Promise<void> {
    await this.writes.meta({ kind: 'frame', frame });
  }
}

/** 0.x /import-value: `req.field` is the frame, `name` its int field. */
export class ClusterLegacyImports {
  constructor(
    private readonly engine: Engine,
    private readonly imports: Pick<ClusterImportService, 'importValues'>,
  ) {}

  importValues(req: ValuesImport, name: string): Promise<void> {
    const field = this.engine.peekApplied((h) => {
      const idx = h.index(req.index);
      return idx === undefined ? name : resolveIntField(idx, req.field, name);
    });
    if (field === '') throw new DomainError('bad_request', 'field is required');
    return this.imports.importValues({ ...req, field });
  }
}
