#!/usr/bin/env node
// Process entry: `bitledger server [flags]` (the default command), `bitledger inspect`,
// `bitledger truncate-log --after N` and `bitledger repair` (offline repair).
// The only place that exits the process.
import { pino } from 'pino';
import { ConfigError, loadConfig } from './config/config.js';
import { createServer } from './app.js';
import { StartupError } from './engine/bootstrap.js';
import { inspect, truncateLog } from './cli/maintenance.js';
import { repair } from './cli/repair.js';

async function main(argv: string[]): Promise<void> {
  const [command = 'server', ...args] = argv[0]?.startsWith('--') ? ['server', ...argv] : argv;
  const afterAt = args.indexOf('--after');
  const after = afterAt >= 0 ? Number(args[afterAt + 1]) : NaN;
  const rest = afterAt >= 0 ? args.filter((_, i) => i !== afterAt && i !== afterAt + 1) : args;
  const cfg = loadConfig(rest, process.env);
  const logger = pino({ level: cfg.logLevel, base: { svc: 'bitledger' } });
  const out = (line: string): void => void process.stdout.write(line + '\n');
  if (command === 'inspect') return inspect(cfg, logger, out);
  if (command === 'repair') return repair(cfg, logger, out);
  if (command === 'truncate-log') {
    if (!Number.isSafeInteger(after) || after < 0) throw new ConfigError('truncate-log needs --after <sequence>');
    return truncateLog(cfg, after, logger, out);
  }
  if (command !== 'server') throw new ConfigError(`unknown command ${command} (expected: server, inspect, truncate-log, repair)`);
  const fatal = (err: Error): void => {
    logger.fatal({ err: String(err), stack: err.stack }, 'fatal: stopping; restart replays the log');
    logger.flush();
    process.exit(70);
  };
  const server = await createServer(cfg, logger, fatal);
  await server.listen();
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    server.close().then(
      () => {
        logger.info('stopped cleanly');
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err: String(err) }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const known = err instanceof ConfigError || err instanceof StartupError || (err instanceof Error && /in use|InUse|corrupt|format|DiskFull/i.test(err.name));
  process.stderr.write(`bitledger: ${known ? (err as Error).message : String((err as Error)?.stack ?? err)}\n`);
  process.exit(known ? 2 : 1);
});
