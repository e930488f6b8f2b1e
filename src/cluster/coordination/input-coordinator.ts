// 0.x input definitions in cluster mode (service/legacy/input-service.ts): a definition is kept in
// the schema, so defining and deleting one are `frame` meta commands that every node applies
// through its own InputService (the frames it lists created in the same commit). An ingest is
// read against this node's schema once it has caught up on NAME.meta, turned into one bits import
// per frame, validated and split by shard as any import (import-coordinator.ts), and sent as one
// Kafka transaction: a read-committed holder sees all of a request's records or none, as one node
// imports them in one write.
import type { Engine } from '../../engine/engine.js';
import { type InputApi, inputImports, storedDefinition } from '../../service/legacy/input-service.js';
import type { InputDefinition } from '../../service/legacy/input-definition.js';
import { validateName } from '../../domain/names.js';
import type { LogCommand } from '../commands/command.js';
import type { ClusterWrites } from './cluster-writes.js';
import { ClusterImportService } from './import-coordinator.js';

export class ClusterInputService implements InputApi {
  private readonly imports: ClusterImportService;

  constructor(
    private readonly engine: Engine,
    private readonly writes: ClusterWrites,
  ) {
    this.imports = new ClusterImportService(engine, writes);
  }

  async define(index: string, name: string, body: unknown): Promise<void> {
    validateName(name);
    await this.writes.meta({ kind: 'frame', frame: { op: 'defineInput', index, name, body } });
  }

  async get(index: string, name: string): Promise<InputDefinition> {
    await this.writes.caughtUpMeta();
    return this.engine.read((h) => storedDefinition(h, index, name));
  }

  async delete(index: string, name: string): Promise<void> {
    await this.writes.meta({ kind: 'frame', frame: { op: 'deleteInput', index, name } });
  }

  async ingest(index: string, name: string, body: unknown): Promise<void> {
    await this.writes.caughtUpMeta();
    const requests = this.engine.peekApplied((h) => inputImports(h, index, name, body));
    const commands: LogCommand[] = [];
    for (const req of requests) commands.push(...(await this.imports.commandsForBits(req)));
    if (commands.length > 0) await this.writes.log(commands);
  }
}
