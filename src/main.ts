#!/usr/bin/env -S node --initial-old-space-size=64
// Process entry: `bitledger [COMMAND] [flags]` through the command table (src/cli/commands.ts);
// `server` is the default. A command's error ends here: an expected one is one line on stderr and
// exit code 2, anything else prints its stack and exits 1. The server command exits on its own
// too, from its signal handlers and on a fatal storage error (src/cli/server-command.ts).
import { pino } from 'pino';
import { COMMANDS } from './cli/commands.js';
import { parseCommandLine } from './cli/command-line.js';
import { RemoteError } from './cli/http-target.js';
import { ConfigError, loadConfigFromProcess } from './config/config.js';
import { commandHelp, generalHelp } from './cli/help.js';
import { StartupError } from './engine/bootstrap.js';
import { HistoryRangeError } from './engine/history.js';
import { LogVerifyError } from './cli/log.js';
import { UsageError } from './cli/args.js';
import {
  DataDirInUseError,
  DiskFullError,
  FormatTooNewError,
  LevelDbCorruptError,
  LogCorruptionError,
  LogRangeError,
  SnapshotCorruptError,
  WalCorruptError,
} from './storage/errors.js';

async function main(argv: string[]): Promise<void> {
  const out = (line: string): void => void process.stdout.write(line + '\n');
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') return out(generalHelp(COMMANDS));
  const named = argv[0] !== undefined && !argv[0].startsWith('-');
  const name = named ? argv[0] : 'server';
  const command = COMMANDS.find((c) => c.name === name);
  if (command === undefined)
    throw new ConfigError(
      `unknown command ${name} (expected: ${COMMANDS.map((c) => c.name).join(', ')}; bitledger --help)`,
    );
  if (command.raw !== undefined) {
    // History commands parse their own arguments; their logger writes to stderr, since stdout
    // carries the command's output.
    if (argv.slice(1).some((a) => a === '--help' || a === '-h')) return out(commandHelp(command));
    return command.raw(argv.slice(1), pino({ level: 'warn' }, pino.destination(2)), out);
  }
  const line = parseCommandLine(command, named ? argv.slice(1) : argv);
  if (line.help) return out(command.name === 'server' && !named ? generalHelp(COMMANDS) : commandHelp(command));
  const cfg = loadConfigFromProcess(line.settingArgs, command.settings, (w) =>
    process.stderr.write(`bitledger: warning: ${w}\n`),
  );
  const logger = pino({ level: cfg.logLevel, base: { svc: 'bitledger' } });
  await command.run({ line, cfg, logger, out });
}

const EXPECTED = [
  ConfigError,
  UsageError,
  HistoryRangeError,
  LogVerifyError,
  StartupError,
  RemoteError,
  DataDirInUseError,
  FormatTooNewError,
  LogCorruptionError,
  LogRangeError,
  SnapshotCorruptError,
  LevelDbCorruptError,
  WalCorruptError,
  DiskFullError,
];

main(process.argv.slice(2)).catch((err: unknown) => {
  const known = EXPECTED.some((E) => err instanceof E);
  process.stderr.write(`bitledger: ${known ? (err as Error).message : String((err as Error)?.stack ?? err)}\n`);
  process.exit(known ? 2 : 1);
});
