// Legacy (0.5–0.10) value import: the request names a frame and its int field `name`, which maps
// to the int field `<frame>_<name>` (or a plain int field `name`); the naming is decided in the
// same write as the import, against the same state.
import type { Engine } from '../../engine/engine.js';
import type { ImportService, ValuesImport } from '../import/import-service.js';
import { resolveIntField } from './legacy-meta.js';

export class LegacyImportService {
  constructor(
    private readonly engine: Engine,
    private readonly imports: Pick<ImportService, 'decideBits' | 'decideValues'>,
  ) {}

  /** `req.field` is the frame; `name` the frame's int field. */
  importValues(req: ValuesImport, name: string): Promise<void> {
    return this.engine.commit({
      decide: (h, sink) => {
        const idx = h.index(req.index);
        const field = idx === undefined ? name : resolveIntField(idx, req.field, name);
        this.imports.decideValues(h, sink, { ...req, field });
      },
    });
  }
}
