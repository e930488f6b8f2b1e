// The logger fastify hands each request (req.log, reply.log), made only when a request logs. Given
// a logger instance, fastify makes a pino child for every request (its bindings serialized) and,
// because it has a logger, puts a 'finish' and an 'error' listener on every response to time it;
// bitledger logs per request only on errors, cancellations and the capped access log. So the app
// gets no logger instance (app.log is set to the server's logger instead) and a child-logger
// factory that returns this stand-in: the pino child with the request id is made on its first use.
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

export class RequestLog implements FastifyBaseLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  private get log(): Logger {
    this.made ??= this.parent.child(this.bindings, this.options);
    return this.made;
  }

  get level(): string {
    return this.made?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.log.level = level;
  }

  // Methods on the prototype, not arrow fields: a request that never logs makes no closures.
  fatal(...args: unknown[]): void {
    Reflect.apply(this.log.fatal, this.log, args);
  }
  error(...args: unknown[]): void {
    Reflect.apply(this.log.error, this.log, args);
  }
  warn(...args: unknown[]): void {
    Reflect.apply(this.log.warn, this.log, args);
  }
  info(...args: unknown[]): void {
    Reflect.apply(this.log.info, this.log, args);
  }
  debug(...args: unknown[]): void {
    Reflect.apply(this.log.debug, this.log, args);
  }
  trace(...args: unknown[]): void {
    Reflect.apply(this.log.trace, this.log, args);
  }
  silent(...args: unknown[]): void {
    Reflect.apply(this.log.silent, this.log, args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.log.child(bindings, options) as FastifyBaseLogger;
  }
}

/** fastify's childLoggerFactory: a RequestLog over the server's logger (fastify's own is a no-op). */
export function requestLogs(
  logger: Logger,
): (parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) => FastifyBaseLogger {
  return (_parent, bindings, options) => new RequestLog(logger, bindings, options);
}
