// Format 1: the initial layout (log records under 'L' + u64 BE seq, meta under 'M').
// A fresh store has nothing to convert; the runner stamps version 1 after this step.
import type { KvStore } from '../src/storage/kv.js';
import type { Migration } from '../src/storage/migration.js';

const migration: Migration = {
  version: 1,
  description: 'initial layout: log records and meta keys',
  async up(_db: KvStore): Promise<void> {},
};

export default migration;
