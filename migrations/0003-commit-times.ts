// Format 3: every group commit stores its commit time beside its records (T keys, see
// src/storage/commit-times.ts). Nothing on disk is converted: records written before this step
// have no time and are restorable by sequence only. The stamp keeps older builds out: they would
// append batches without times, and those records would then inherit an earlier batch's time.
import type { KvStore } from '../src/storage/kv.js';
import type { Migration } from '../src/storage/migration.js';

const migration: Migration = {
  version: 3,
  description: 'log batches carry their commit time',
  async up(_db: KvStore): Promise<void> {},
};

export default migration;
