// Format 2: Bits records (BitsSet/BitsCleared) may carry small rows as plain varint offsets
// (fields 8 and 9 of proto/log/events.proto) instead of roaring bitmaps. Nothing on disk needs
// converting: format-1 records stay readable. The stamp exists so that an older build, which
// would skip the new fields as unknown and silently lose those bits, refuses the directory.
import type { KvStore } from '../src/storage/kv.js';
import type { Migration } from '../src/storage/migration.js';

const migration: Migration = {
  version: 2,
  description: 'Bits records may carry sparse varint offsets',
  async up(_db: KvStore): Promise<void> {},
};

export default migration;
