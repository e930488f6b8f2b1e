// The logger fastify hands each request (req.log, reply.log), made only when a request logs. Given
// a logger instance, fastify makes a pino child for every request (its bindings serialized) and,
// because it has a logger, puts a 'finish' and an 'error' listener on every response to time it;
// bitledger logs per request only on errors, cancellations and the capped access log. So the app
// gets no logger instance (app.log is set to the server's logger instead) and a child-logger
// factory that returns this stand-in: the pino child with the request id is made on its first use.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

// The log methods, one per level, are put on the prototype below (not arrow fields: a request
// that never logs makes no closures); this declares them.
export interface RequestLog extends Record<(typeof LEVELS)[number], (...args: unknown[]) => void> {}

// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface only declares the level methods set below
export class RequestLog implements FastifyBaseLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The pino child with the request's bindings, made on first use. */
  logger(): Logger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options) as FastifyBaseLogger;
  }
}

for (const level of LEVELS)
  RequestLog.prototype[level] = function (this: RequestLog, ...args: unknown[]): void {
    const log = this.logger();
    Reflect.apply(log[level], log, args);
  };

/** fastify's childLoggerFactory: a RequestLog over the server's logger (fastify's own is a no-op). */
export function requestLogs(
  logger: Logger,
): (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) => FastifyBaseLogger {
  return (_parent, bindings, options) => new RequestLog(logger, bindings, options);
}
