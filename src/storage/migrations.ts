// Forward-only on-disk format migrations. The data directory's format version lives in the meta
// key `format-version`; each step above it runs in order and is stamped with its own synced
// write, so a crash leaves the directory at the last completed step. A step may therefore run
// twice (crash after its work, before its stamp) and must be idempotent. Steps are imported
// explicitly rather than globbed so the list is the same under tsx and compiled output.
import type { Logger } from 'pino';
import m0001 from '../../migrations/0001-initial.js';
import m0002 from '../../migrations/0002-sparse-bits.js';
import m0003 from '../../migrations/0003-commit-times.js';
import { assert } from '../util/assert.js';
import type { KvStore } from './kv.js';
import { FormatTooNewError } from './errors.js';
import type { Migration } from './migration.js';
import { FORMAT_VERSION_META, decodeMetaUint, encodeMetaUint, metaKey } from './keys.js';

export const MIGRATIONS: readonly Migration[] = [m0001, m0002, m0003];

const FORMAT_KEY = metaKey(FORMAT_VERSION_META);

/** The stored format version; 0 for a directory no step has touched yet. */
export async function formatVersion(db: KvStore): Promise<number> {
  const raw = await db.get(FORMAT_KEY);
  return raw === undefined ? 0 : decodeMetaUint(raw, FORMAT_VERSION_META);
}

/** The stored format version, refusing one from a newer build; changes nothing. */
export async function checkFormat(db: KvStore, migrations: readonly Migration[] = MIGRATIONS): Promise<number> {
  const found = await formatVersion(db);
  if (found > migrations.length) throw new FormatTooNewError(db.location, found, migrations.length);
  return found;
}

/** Brings `db` up to the newest known format; refuses a directory from a newer build. */
export async function runMigrations(
  db: KvStore,
  logger: Logger,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<{ from: number; to: number }> {
  migrations.forEach((m, i) =>
    assert(m.version === i + 1, `migration #${i} has version ${m.version}, expected ${i + 1}`),
  );
  const from = await checkFormat(db, migrations);
  const supported = migrations.length;
  for (const m of migrations.slice(from)) {
    logger.info({ version: m.version, description: m.description }, 'applying on-disk format migration');
    await m.up(db);
    await db.put(FORMAT_KEY, encodeMetaUint(m.version), { sync: true });
  }
  return { from, to: supported };
}
