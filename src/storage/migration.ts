// One step of the data directory's format (migrations/NNNN-name.ts). Apart from the runner
// (migrations.ts) so that the steps, which the runner imports, do not import it back.
import type { KvStore } from './kv.js';

export interface Migration {
  /** 1, 2, 3, … with no gaps; the file is migrations/NNNN-name.ts with NNNN = version. */
  readonly version: number;
  readonly description: string;
  up(db: KvStore): Promise<void>;
}
