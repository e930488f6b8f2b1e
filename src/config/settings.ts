// The one table of server settings. Each row gives the flag and config-file key (its name), the
// default, the help text and any Pilosa config-file alias; the Config type, the defaults, the
// environment names (BITLEDGER_NAME), `bitledger --help` and the README's flag table are all
// derived from it. Adding a setting is adding a row.
import { LIMITS } from './limits.js';

export type FsyncPolicy = 'always' | 'interval' | 'never';

export interface SettingRow<N extends string = string, T = unknown> {
  name: N;
  default: T;
  help: string;
  /** For enumerated settings: the accepted values. */
  values?: readonly string[];
  /** Pilosa config-file keys that mean the same ("bind", "tls.certificate"…). */
  pilosa?: readonly string[];
  /** Other environment variables read too (Pilosa's), below BITLEDGER_NAME in precedence. */
  env?: readonly string[];
  /** How the default reads in help ("(off)" for empty values). */
  shown?: string;
  /** A duration kept in ms, written as "60s", "1m30s", "24h"; a bare number is in this unit. */
  duration?: 'ms' | 's';
}

const row = <const N extends string, T>(
  name: N,
  def: T,
  help: string,
  more: Omit<SettingRow, 'name' | 'default' | 'help' | 'values'> = {},
): SettingRow<N, T> => ({ name, default: def, help, ...more });
const oneOf = <const N extends string, const V extends readonly string[]>(
  name: N,
  values: V,
  def: V[number],
  help: string,
): SettingRow<N, V[number]> => ({ name, default: def, help, values });

export const SETTINGS = [
  row('bind', '127.0.0.1:10101', 'listen address (":10101" = all interfaces, as in Pilosa)', {
    pilosa: ['bind'],
    env: ['PILOSA_BIND'],
  }),
  row('data-dir', './data', 'LevelDB log (leveldb/), snapshots (snapshots/), node id (.id)', {
    pilosa: ['data-dir'],
    env: ['PILOSA_DATA_DIR'],
  }),
  oneOf(
    'fsync',
    ['always', 'interval', 'never'],
    'always',
    'when a write is flushed to disk before its answer (README: Durability)',
  ),
  row('fsync-interval-ms', 100, 'flush period for --fsync interval'),
  row('snapshot-every-events', 200_000, 'snapshot after this many log events …'),
  row('snapshot-every-bytes', 64 * 1024 * 1024, '… or this many log bytes (kept small so a restart replays little)'),
  row('cache-recalc-interval-ms', 10_000, 'TopN cache recalculation period'),
  row('max-body-bytes', LIMITS.maxBodyBytes, 'larger request bodies get 413'),
  row('log-level', 'info', 'pino level (trace, debug, info, warn, error, fatal)'),
  row('access-log-per-second', 100, 'access-log lines per second at most, then a per-second summary (0: off)'),
  row('slow-query-ms', 1000, 'log queries slower than this with their PQL (0: off)', {
    pilosa: ['cluster.long-query-time', 'long-query-time'],
  }),
  row('kafka-brokers', [] as string[], 'comma list of Kafka brokers; enables the Kafka features', { shown: '(off)' }),
  row('kafka-mirror-topic', '', 'mirror committed log records to this topic', { shown: '(off)' }),
  oneOf(
    'kafka-mirror-ack',
    ['local', 'kafka'],
    'local',
    'kafka: a write is also acknowledged only once the mirror topic has it',
  ),
  row(
    'kafka-mirror-ack-timeout',
    10_000,
    'with --kafka-mirror-ack kafka: longest a write waits for the mirror, then 503 (durable here, mirrored later)',
    { duration: 'ms', shown: '10s' },
  ),
  row('replica-of', '', 'run as a read-only replica of this mirror topic', { shown: '(off)' }),
  row('cluster-name', '', 'join cluster NAME: shards spread over its nodes through Kafka (needs --kafka-brokers)', {
    shown: '(off)',
  }),
  row('advertise', '', 'URL other nodes and clients reach this node at (cluster mode)', {
    shown: '(the bind address)',
  }),
  row('replicas', 1, 'cluster mode: how many nodes hold each shard'),
  row('cluster-partitions', 64, 'cluster mode: partitions of NAME.log, fixed when the cluster is created'),
  row(
    'cluster-stale-reads',
    false,
    'cluster mode: with the Kafka broker unreachable, answer reads from what the holders have applied (header X-Bitledger-Stale-Read) instead of 503',
  ),
  oneOf(
    'legacy-release',
    ['', '0.5', '0.6', '0.7', '0.8', '0.9', '0.10'],
    '',
    'answer as this 0.x release (README: the frame-based API); empty: accept every 0.x spelling',
  ),
  row(
    'query-timeout',
    60_000,
    'deadline of one query in ms or as a duration such as 60s (0: none); the query argument timeout can shorten it',
    { duration: 'ms', shown: '60s' },
  ),
  row('query-workers', 0, 'threads that run read queries over shards (0: one per core; 1: the request thread alone)', {
    shown: '0 (one per core)',
  }),
  row('max-result-rows', 1_000_000, 'rows, groups or pairs one Rows/GroupBy/TopN may return (0: no bound)'),
  row(
    'max-result-bytes',
    256 * 1024 * 1024,
    'bytes one query answer may take, counted before it is built; larger ones get 400 (0: no bound; README: Bounds)',
    { shown: '256 MiB' },
  ),
  row(
    'max-query-memory',
    256 * 1024 * 1024,
    "bytes of bitmaps one call's combinations may build at once in a shard; more get 400 (0: no bound)",
    { shown: '256 MiB' },
  ),
  row(
    'request-body-timeout',
    60_000,
    'a request whose body has not fully arrived after this long gets 408 and its connection closed (ms or a duration such as 60s)',
    { duration: 'ms', shown: '60s' },
  ),
  row('tls-certificate', '', 'PEM certificate: with --tls-key, serve https', {
    pilosa: ['tls.certificate'],
    shown: '(off)',
  }),
  row('tls-key', '', 'PEM private key for --tls-certificate', { pilosa: ['tls.key'], shown: '(off)' }),
  row('tls-skip-verify', false, 'accepted for Pilosa configs; bitledger makes no outgoing TLS calls', {
    pilosa: ['tls.skip-verify'],
  }),
  row('auth-token-file', '', 'bearer tokens, one "TOKEN read-only|read-write" a line (README: Securing bitledger)', {
    shown: '(off)',
  }),
  row('allowed-origins', [] as string[], "browser origins allowed to send mutating requests besides the server's own", {
    pilosa: ['handler.allowed-origins'],
    shown: '(none)',
  }),
  row(
    'history-retention',
    24 * 3_600_000,
    'every point this far back stays restorable and readable with atTime/atSeq (a duration such as 24h or 7d; a bare number is seconds)',
    { duration: 's', shown: '24h' },
  ),
  row(
    'history-retention-bytes',
    0,
    "cap the history's log at this many bytes, oldest snapshots dropped first (0: off)",
  ),
  row(
    'accept-data-loss',
    false,
    "start although LevelDB's write-ahead file lost acknowledged writes (each loss logged)",
  ),
  row(
    'disk-reserve-bytes',
    64 * 1024 * 1024,
    'writes answer 507 while free disk space is below this (plus the largest snapshot)',
  ),
] as const;

type Camel<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type Rows = (typeof SETTINGS)[number];

/** The server's configuration: one property per row, camelCased ("data-dir" → dataDir). */
export type Config = {
  -readonly [R in Rows as Camel<R['name']>]: R['default'] extends readonly string[]
    ? string[]
    : R['default'] extends boolean
      ? boolean
      : R['default'];
};

export const camel = (name: string): string => name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
export const envName = (name: string): string => `BITLEDGER_${name.toUpperCase().replace(/-/g, '_')}`;

export const DEFAULTS: Config = Object.fromEntries(
  SETTINGS.map((s) => [camel(s.name), Array.isArray(s.default) ? [...(s.default as string[])] : s.default]),
) as Config;

/** The row of a flag or config-file key. */
export const SETTING_BY_NAME: ReadonlyMap<string, SettingRow> = new Map(SETTINGS.map((s) => [s.name, s as SettingRow]));
