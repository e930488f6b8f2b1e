// Requests answered before fastify's routing (lean-query.ts): the server's request handler asks
// the door first and hands fastify only what it left. The door is opened once the app is
// assembled (server-http.ts); until then, and for servers that have none, fastify answers all.
import { type IncomingMessage, type ServerOptions, type ServerResponse, createServer } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import type { FrontDoor } from './lean-query.js';
import type { SecurityChecks } from './security.js';

/** The options fastify hands a server factory, with its defaults applied. */
interface ServerFactoryOptions {
  http?: ServerOptions;
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export class FrontDoors {
  private door: FrontDoor | undefined;
  /** The request checks fastify runs (security.ts), set by buildHttpApp: the door runs them too. */
  checks: SecurityChecks | undefined;
  /** Set as the app starts closing: fastify answers every request from then on (503s). */
  closing = false;
  /** Requests the door answered (tests: which way a request went). */
  taken = 0;

  open(door: FrontDoor): void {
    this.door = door;
  }

  close(done: () => void): void {
    this.closing = true;
    done();
  }

  /** `handler` (fastify's routing) behind the door. */
  serve(handler: Handler): Handler {
    return (req, res) => {
      const door = this.door;
      if (door !== undefined && !this.closing && door(req, res)) this.taken++;
      else handler(req, res);
    };
  }

  /**
   * fastify's own plain-http server (its lib/server.js: the same options and timeouts) with the
   * door in front, for an app that listens itself (app.listen).
   */
  serverFactory(): FastifyServerFactory {
    return (handler, options) => {
      const opts = options as unknown as ServerFactoryOptions;
      const server = createServer(opts.http ?? {}, this.serve(handler as Handler));
      server.keepAliveTimeout = opts.keepAliveTimeout;
      server.requestTimeout = opts.requestTimeout;
      server.setTimeout(opts.connectionTimeout);
      if (opts.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = opts.maxRequestsPerSocket;
      return server;
    };
  }
}
