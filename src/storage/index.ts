// storage: the bytes on disk. An event log in LevelDB (contiguous sequences, CRC-checked
// envelopes, atomic batches with meta such as Kafka offsets), snapshot files, the data
// directory (lock, node id) and forward-only format migrations.
// Invariants:
// - storage moves bytes and never reads events: payloads and type tags are opaque here;
// - log records firstSeq..lastSeq exist with no gaps, each append is one atomic LevelDB batch,
//   and with fsync 'always' an append resolves only once it is durable;
// - a damaged record at the very end is a torn write and is dropped at open; damage anywhere
//   else is LogCorruptionError and is never skipped;
// - snapshot files are published by rename and are complete or absent;
// - whoever holds the LevelDB handle owns the data directory (openLevelDb is the lock).
export { EventLog } from './event-log.js';
export type { AppendResult, EventLogOptions, FsyncPolicy, MetaWrite } from './event-log.js';
export type { LogRecord, NewRecord } from './envelope.js';
export { SnapshotStore } from './snapshot-store.js';
export { ensureDataDir, nodeId, openLevelDb } from './data-dir.js';
export type { LevelDb } from './data-dir.js';
export { MIGRATIONS, formatVersion, runMigrations } from './migrations.js';
export type { Migration } from './migration.js';
export {
  DataDirInUseError,
  FormatTooNewError,
  LogCorruptionError,
  LogRangeError,
  PositionCorruptError,
  SnapshotCorruptError,
} from './errors.js';
export { decodeConsumerPosition, encodeConsumerPosition } from './consumer-position.js';
export type { ClusterPosition, ConsumerPosition, MirrorPosition, ReplicaPosition } from './consumer-position.js';
