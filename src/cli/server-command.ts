// `bitledger server`: listen, replay behind the socket, serve until SIGTERM/SIGINT.
import type { Logger } from 'pino';
import { launchServer, type Server } from '../app.js';
import type { Config } from '../config/config.js';
import { commitTestHooks, diskReserveFloorHook } from '../config/test-hooks.js';

export async function runServer(cfg: Config, logger: Logger): Promise<void> {
  const fatal = (err: Error): void => {
    logger.fatal({ err: String(err), stack: err.stack }, 'fatal: stopping; restart replays the log');
    logger.flush();
    process.exit(70);
  };
  const launch = await launchServer(cfg, logger, fatal, {
    commitTestHooks: commitTestHooks(process.env),
    diskReserveFloor: diskReserveFloorHook(process.env),
  });
  let server: Server | undefined;
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Replay only reads: stopping before it finished leaves nothing to flush.
    if (server === undefined) process.exit(0);
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
  server = await launch.booted;
}
