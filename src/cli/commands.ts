// The command table: what `bitledger COMMAND` runs, its flags (for parsing and --help) and
// whether it takes the server settings. main.ts dispatches through it; a new command is a row.
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { ConfigError } from '../config/config.js';
import type { CommandLine, CommandSpec } from './command-line.js';
// Commands load their modules when they run: a server start does not load the CLI import, and
// `bitledger import` does not load the server (crash tests restart servers many times).

export interface RunContext {
  line: CommandLine;
  /** Loaded from the setting flags, environment and config file (commands with settings). */
  cfg: Config;
  logger: Logger;
  out: (line: string) => void;
}

/**
 * A command either runs on the parsed command line and loaded settings (`run`), or parses its own
 * arguments (`raw`: the history commands); main.ts dispatches on which one it has.
 */
export type Command = CommandSpec &
  (
    | { run(ctx: RunContext): Promise<void>; raw?: never }
    | { raw(argv: readonly string[], logger: Logger, out: (line: string) => void): Promise<void>; run?: never }
  );

const URL_FLAG = { name: 'url', value: 'URL', help: 'server address', default: 'http://127.0.0.1:10101' };
const INDEX_FLAG = { name: 'index', short: 'i', value: 'INDEX', help: 'index name' };
const FIELD_FLAG = { name: 'field', short: 'f', value: 'FIELD', help: 'field name' };

function required(line: CommandLine, command: string, name: string): string {
  const v = line.flags.get(name);
  if (v === undefined || v === '') throw new ConfigError(`${command}: --${name} is required`);
  return v;
}

export const COMMANDS: readonly Command[] = [
  {
    name: 'server',
    summary: 'run the server (the default command)',
    settings: true,
    flags: [],
    run: async ({ cfg, logger }) => (await import('./server-command.js')).runServer(cfg, logger),
  },
  {
    name: 'inspect',
    summary: "show a stopped server's data directory: log range, snapshots",
    settings: true,
    flags: [],
    run: async ({ cfg, logger, out }) => (await import('./maintenance.js')).inspect(cfg, logger, out),
  },
  {
    name: 'restore',
    summary:
      'restore a backup, a stopped data directory, a Kafka mirror topic or a whole cluster to a sequence or a time, into a new data directory',
    settings: false,
    flags: [
      {
        name: 'from',
        value: 'PATH',
        help: 'a backup directory or a data directory not in use (with --cluster-name: a cluster backup to start from)',
      },
      { name: 'from-kafka', value: 'TOPIC', help: 'a mirror topic instead (with --kafka-brokers)' },
      {
        name: 'cluster-name',
        value: 'NAME',
        help: "a cluster's whole state from its topics NAME.meta and NAME.log (with --kafka-brokers; --to-time, not --to-seq)",
      },
      { name: 'kafka-brokers', value: 'LIST', help: 'comma list of brokers for --from-kafka or --cluster-name' },
      { name: 'data-dir', value: 'DIR', help: 'the new, empty data directory' },
      { name: 'to-seq', value: 'N', help: 'the last sequence to keep' },
      { name: 'to-time', value: 'T', help: 'RFC 3339 or Unix seconds: keep what was committed at or before it' },
    ],
    raw: async (argv, logger, out) => (await import('./restore.js')).restoreCommand(argv, logger, out),
  },
  {
    name: 'backup',
    summary: "copy a server's newest snapshot and the log after it into a backup directory (incremental)",
    settings: false,
    flags: [
      {
        name: 'url',
        value: 'URL',
        help: "a running server (online backup); a cluster node: every partition's newest snapshot and its positions",
      },
      { name: 'data-dir', value: 'DIR', help: 'a stopped data directory (offline backup)' },
      { name: 'to', value: 'PATH', help: 'the backup directory' },
    ],
    raw: async (argv, logger, out) => (await import('./backup.js')).backupCommand(argv, logger, out),
  },
  {
    name: 'log',
    summary: 'log inspect (list records) or log verify (checksums and sequence continuity) of a data directory',
    settings: false,
    positional: 'inspect|verify',
    flags: [
      { name: 'data-dir', value: 'DIR', help: 'the data directory' },
      { name: 'from-seq', value: 'N', help: 'inspect: first sequence' },
      { name: 'to-seq', value: 'N', help: 'inspect: last sequence' },
      { name: 'since', value: 'T', help: 'inspect: commit time from' },
      { name: 'until', value: 'T', help: 'inspect: commit time to' },
      { name: 'index', value: 'I', help: 'inspect: records of this index only' },
    ],
    raw: async (argv, logger, out) => (await import('./log.js')).logCommand(argv, logger, out),
  },
  {
    name: 'repair',
    summary: "rebuild a damaged LevelDB with LevelDB's own repair (the server must be stopped)",
    settings: true,
    flags: [],
    run: async ({ cfg, logger, out }) => (await import('./repair.js')).repair(cfg, logger, out),
  },
  {
    name: 'truncate-log',
    summary: 'drop log records after a sequence (the explicit repair a corrupt log names)',
    settings: true,
    flags: [{ name: 'after', value: 'SEQ', help: 'keep records up to and including this sequence' }],
    run: async ({ line, cfg, logger, out }) => {
      const after = Number(line.flags.get('after'));
      if (!Number.isSafeInteger(after) || after < 0) throw new ConfigError('truncate-log needs --after <sequence>');
      return (await import('./maintenance.js')).truncateLog(cfg, after, logger, out);
    },
  },
  {
    name: 'import',
    summary: 'import CSV files (row,column[,timestamp] or column,value) into a field over HTTP',
    settings: false,
    positional: 'FILE.csv…',
    flags: [
      URL_FLAG,
      INDEX_FLAG,
      FIELD_FLAG,
      { name: 'create', help: 'create the index and field when missing' },
      { name: 'clear', help: 'clear the listed bits instead of setting them' },
      { name: 'batch-size', value: 'N', help: 'bits per request', default: '1000000' },
    ],
    run: async ({ line, out }) => {
      const batchSize = Number(line.flags.get('batch-size') ?? 1_000_000);
      if (!Number.isSafeInteger(batchSize) || batchSize < 1)
        throw new ConfigError('import: --batch-size must be a positive integer');
      const { importCsv } = await import('./import-csv.js');
      const r = await importCsv({
        url: line.flags.get('url') ?? URL_FLAG.default,
        index: required(line, 'import', 'index'),
        field: required(line, 'import', 'field'),
        files: line.positional,
        create: line.flags.has('create'),
        clear: line.flags.has('clear'),
        batchSize,
        progress: process.stderr,
      });
      out(
        `imported ${r.bits} bits in ${(r.ms / 1000).toFixed(1)} s (${Math.round(r.bits / (r.ms / 1000 || 1))} bits/s)`,
      );
    },
  },
  {
    name: 'export',
    summary: "write a field's bits as row,column CSV",
    settings: false,
    flags: [
      URL_FLAG,
      INDEX_FLAG,
      FIELD_FLAG,
      { name: 'output', short: 'o', value: 'FILE', help: 'output file', default: 'stdout' },
    ],
    run: async ({ line }) => {
      const { exportCsv } = await import('./export-csv.js');
      await exportCsv({
        url: line.flags.get('url') ?? URL_FLAG.default,
        index: required(line, 'export', 'index'),
        field: required(line, 'export', 'field'),
        output: line.flags.get('output'),
      });
    },
  },
];
