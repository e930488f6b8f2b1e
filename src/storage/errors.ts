// Storage failures that need an operator, not a retry: each message names the place (sequence,
// file, directory) and the way out, because it is printed once at startup and then the process
// stops. Bad client input never reaches this layer.

/** A record inside the committed range is damaged or missing: replay cannot continue past it. */
export class LogCorruptionError extends Error {
  override name = 'LogCorruptionError';
  constructor(
    readonly seq: number,
    readonly reason: string,
  ) {
    super(
      `event log corrupt at sequence ${seq}: ${reason}. The committed log is damaged, so the ` +
        `server refuses to start rather than lose or invent events. Restore the data directory ` +
        `from a backup (or a snapshot plus the Kafka mirror), or, if losing sequence ${seq} and ` +
        `everything after it is acceptable, truncate the log explicitly: ` +
        `bitledger truncate-log --after ${seq - 1} --data-dir DIR.`,
    );
  }
}

/** A read asked for records that retention has already released. */
export class LogRangeError extends Error {
  override name = 'LogRangeError';
  constructor(
    readonly fromSeq: number,
    readonly firstSeq: number,
  ) {
    super(
      `event log records before sequence ${firstSeq} were released; cannot read from ${fromSeq} ` +
        `(start from a snapshot at sequence ${firstSeq - 1} or later)`,
    );
  }
}

export class SnapshotCorruptError extends Error {
  override name = 'SnapshotCorruptError';
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(
      `snapshot file ${file} is corrupt: ${reason}. Move it aside to fall back to an older ` +
        `snapshot (the log must still hold the records after that one), or restore from a backup.`,
    );
  }
}

export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
  constructor(readonly dir: string) {
    super(`data directory ${dir} is in use by another process`);
  }
}

/** The data directory was written by a newer build; opening it could misread or damage it. */
export class FormatTooNewError extends Error {
  override name = 'FormatTooNewError';
  constructor(
    readonly location: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      `data directory ${location} has on-disk format version ${found}, but this build supports ` +
        `up to ${supported}: run a newer bitledger, or restore a backup made by this version`,
    );
  }
}

/**
 * LevelDB cannot be opened as it is (CURRENT missing, MANIFEST or a table damaged). Nothing was
 * created or deleted; LevelDB's own repair rebuilds what can be read.
 */
export class LevelDbCorruptError extends Error {
  override name = 'LevelDbCorruptError';
  constructor(
    readonly dir: string,
    readonly reason: string,
  ) {
    super(
      `LevelDB in ${dir} cannot be opened: ${reason}. Nothing was changed. Run ` +
        `bitledger repair --data-dir ${dir} (LevelDB's own repair keeps every readable record), ` +
        `then start again; or restore the data directory from a backup.`,
    );
  }
}

/** LevelDB's WAL has damage followed by valid records: opening it would drop acknowledged writes. */
export class WalCorruptError extends Error {
  override name = 'WalCorruptError';
  constructor(
    readonly dir: string,
    readonly damage: { file: string; offset: number; bytes: number; reason: string },
  ) {
    super(
      `LevelDB write-ahead file ${damage.file} is corrupt at offset ${damage.offset} ` +
        `(${damage.reason}; ${damage.bytes} bytes) and valid records follow it, so acknowledged ` +
        `writes would be lost. Nothing was changed. Restore the data directory from a backup, or ` +
        `accept losing those bytes: bitledger repair --data-dir ${dir}, or start with --accept-data-loss.`,
    );
  }
}

/** LevelDB could not open for lack of space (its WAL is replayed into a table at open). */
export class DiskFullError extends Error {
  override name = 'DiskFullError';
  constructor(
    readonly dir: string,
    readonly reason: string,
  ) {
    super(
      `disk full: LevelDB in ${dir} cannot open (${reason}). Nothing was lost; free space on its file system, then start again.`,
    );
  }
}

/** A stored consumer position (mirror, replica, cluster partition) cannot be read. */
export class PositionCorruptError extends Error {
  override name = 'PositionCorruptError';
  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(
      `stored consumer position ${key} is unreadable: ${reason}. Resuming from a guess could skip or repeat ` +
        `records, so the server stops. Restore the data directory from a backup, or start a fresh one ` +
        `that follows from the beginning.`,
    );
  }
}
