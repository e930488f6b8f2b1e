// Schema changes in cluster mode (the SchemaService the routes call): names are checked here,
// then each change is one meta command; this node applies it before answering, and answers its
// own result, which is every node's (the same meta order from the same state).
import { indexExists, indexNotFound } from '../../domain/messages.js';
import { validateName } from '../../domain/names.js';
import type { FieldOptions, IndexOptions } from '../../domain/types.js';
import type { Engine } from '../../engine/engine.js';
import type { parseFieldBody } from '../../service/schema-service.js';
import type { SchemaOp } from '../commands/command.js';
import type { ClusterWrites } from './cluster-writes.js';

export class ClusterSchemaService {
  constructor(
    private readonly engine: Engine,
    private readonly writes: ClusterWrites,
  ) {}

  async createIndex(name: string, options: IndexOptions): Promise<void> {
    validateName(name);
    // The common mistake answered without a round trip; the meta command checks again.
    if (this.engine.peekApplied((h) => h.index(name) !== undefined)) throw indexExists();
    await this.run({ op: 'createIndex', index: name, options });
  }

  async deleteIndex(name: string): Promise<void> {
    if (this.engine.peekApplied((h) => h.index(name) === undefined)) throw indexNotFound();
    await this.run({ op: 'deleteIndex', index: name });
  }

  async createField(index: string, field: string, parsed: ReturnType<typeof parseFieldBody>): Promise<void> {
    validateName(field);
    await this.run({ op: 'createField', index, field, options: parsed.options, extraIntFields: parsed.extraIntFields });
  }

  async deleteField(index: string, field: string): Promise<void> {
    await this.run({ op: 'deleteField', index, field });
  }

  async applySchema(
    indexes: { name: string; options: IndexOptions; fields: { name: string; options: FieldOptions }[] }[],
  ): Promise<void> {
    for (const i of indexes) {
      validateName(i.name);
      for (const f of i.fields) validateName(f.name);
    }
    await this.run({ op: 'applySchema', indexes });
  }

  private async run(schema: SchemaOp): Promise<void> {
    await this.writes.meta({ kind: 'schema', schema });
  }
}
