// Request checks that run before every route:
// - DNS rebinding: a server bound to loopback answers only Host names that are loopback
//   (localhost, 127.x.y.z, [::1], any port); a page on evil.example that resolves its own name
//   to 127.0.0.1 sends Host: evil.example and gets 403.
// - Cross-origin writes: a browser sends Origin with every cross-origin POST, including the
//   text/plain ones that need no preflight; a mutating request whose Origin is neither the
//   server's own nor listed in --allowed-origins gets 403. Clients that are not browsers send no
//   Origin (Pilosa's clients included) and pass.
// - Bearer tokens (--auth-token-file), when configured: every route but /health and /ready needs
//   one; a read-only token may read (GET, HEAD, and read-only queries: the query route is told,
//   and refuses write calls itself).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './errors.js';

export type TokenRole = 'read-only' | 'read-write';

export interface SecurityOptions {
  /** The address the server listens on; loopback turns the Host check on. */
  bindHost: string;
  /** 'https' when serving TLS: the server's own origin is scheme://Host. */
  scheme: 'http' | 'https';
  /** Origins (scheme://host[:port]) allowed to send mutating requests besides the server's own. */
  allowedOrigins: readonly string[];
  /** Token → role by SHA-256 of the token; undefined: authentication off. */
  tokens?: ReadonlyMap<string, TokenRole>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set for requests made with a read-only token: routes that can write must refuse writes. */
    readOnlyToken?: boolean;
  }
}

/** Paths answered without a token: probes of orchestrators carry none. */
const OPEN_PATHS = new Set(['/health', '/ready']);
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Routes a read-only token may POST to: queries, whose write calls the route refuses. */
const READ_POST_ROUTES = new Set(['/index/:index/query']);

/** A request's verdict: refused (with its answer), allowed with a read-only token, or allowed. */
export type Verdict = { status: number; message: string; bearer?: true } | 'read-only' | undefined;

/** What the checks read of a request. */
export interface CheckedRequest {
  method: string;
  /** The URL as sent (path and query). */
  url: string;
  /** The route it matched ('' for none). */
  route: string;
  host: string | undefined;
  origin: string | undefined;
  authorization: string | undefined;
}

/** The checks, for fastify's hook (installSecurity) and for the lean query path (lean-query.ts). */
export class SecurityChecks {
  private readonly loopbackOnly: boolean;
  private readonly allowed: ReadonlySet<string>;
  /** Clients send one Host header again and again: its verdict is kept for the next request. */
  private lastHost: string | undefined;

  constructor(private readonly o: SecurityOptions) {
    this.loopbackOnly = isLoopbackName(o.bindHost);
    this.allowed = new Set(o.allowedOrigins.map((s) => s.replace(/\/+$/, '').toLowerCase()));
  }

  private loopbackHost(host: string): boolean {
    if (host === this.lastHost) return true;
    if (!isLoopbackName(hostName(host))) return false;
    this.lastHost = host;
    return true;
  }

  verdict(req: CheckedRequest): Verdict {
    const { o } = this;
    const host = req.host;
    if (this.loopbackOnly && host !== undefined && !this.loopbackHost(host))
      return {
        status: 403,
        message: `host ${host} is not a loopback name: this server is bound to ${o.bindHost} and answers localhost, 127.x.y.z or [::1] only (DNS rebinding)`,
      };
    const mutating = !SAFE_METHODS.has(req.method);
    const origin = req.origin;
    if (mutating && origin !== undefined) {
      const own = host === undefined ? undefined : `${o.scheme}://${host}`.toLowerCase();
      const o2 = origin.toLowerCase();
      if (o2 !== own && !this.allowed.has(o2))
        return {
          status: 403,
          message: `cross-origin ${req.method} from ${origin} refused: list the origin in --allowed-origins to allow it`,
        };
    }
    if (o.tokens === undefined || OPEN_PATHS.has(req.url.split('?')[0])) return undefined;
    const role = tokenRole(o.tokens, req.authorization);
    if (role === undefined)
      return {
        status: 401,
        message: 'unauthorized: a valid bearer token is required (Authorization: Bearer <token>)',
        bearer: true,
      };
    if (role === 'read-only' && mutating) {
      if (req.method === 'POST' && READ_POST_ROUTES.has(req.route)) return 'read-only';
      return { status: 403, message: 'forbidden: a read-only token cannot change data' };
    }
    return undefined;
  }
}

export function installSecurity(app: FastifyInstance, o: SecurityOptions): SecurityChecks {
  const checks = new SecurityChecks(o);
  // A callback hook, not an async one: an async hook costs a promise and a microtask hop a
  // request. A refusal sends its answer and does not call done(): fastify stops there.
  app.addHook('onRequest', (req, reply, done) => {
    let refused: FastifyReply | undefined;
    try {
      refused = check(req, reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (refused === undefined) done();
  });
  const check = (req: FastifyRequest, reply: FastifyReply): FastifyReply | undefined => {
    const h = req.headers;
    const v = checks.verdict({
      method: req.method,
      url: req.url,
      route: req.routeOptions.url ?? '',
      host: h.host,
      origin: h.origin,
      authorization: h.authorization,
    });
    if (v === undefined) return undefined;
    if (v === 'read-only') {
      req.readOnlyToken = true;
      return undefined;
    }
    if (v.bearer === true) reply.header('www-authenticate', 'Bearer');
    return sendError(reply, v.status, v.message, reply.request.routeOptions.config?.errorShape ?? 'admin');
  };
  return checks;
}

function tokenRole(tokens: ReadonlyMap<string, TokenRole>, authorization: string | undefined): TokenRole | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  // Looked up by hash: the comparison does not leak how much of a token matched.
  return m === null ? undefined : tokens.get(tokenHash(m[1]));
}

const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/**
 * Reads an --auth-token-file: one token per line with its role, `TOKEN read-only` or
 * `TOKEN read-write`; blank lines and lines starting with # are ignored.
 */
export function readTokenFile(path: string): Map<string, TokenRole> {
  const out = new Map<string, TokenRole>();
  const lines = readFileSync(path, 'utf8').split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const [token, role, ...rest] = line.split(/\s+/);
    if ((role !== 'read-only' && role !== 'read-write') || rest.length > 0) {
      throw new Error(`${path}:${i + 1}: want "TOKEN read-only" or "TOKEN read-write"`);
    }
    out.set(tokenHash(token), role);
  });
  if (out.size === 0) throw new Error(`${path}: no tokens (an empty token file would lock every client out)`);
  return out;
}

/**
 * The token cluster members use with each other: the first read-write token of the file (every
 * member reads the same file). undefined when the file has none.
 */
export function memberToken(path: string): string | undefined {
  for (const raw of readFileSync(path, 'utf8').split(/\r?\n/)) {
    const [token, role] = raw.trim().split(/\s+/);
    if (role === 'read-write' && token !== undefined && !token.startsWith('#')) return token;
  }
  return undefined;
}

/** The name of a Host header: without the port, IPv6 brackets kept off. */
function hostName(host: string): string {
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']') > 0 ? host.indexOf(']') : undefined);
  const colon = host.lastIndexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

function isLoopbackName(name: string): boolean {
  const n = name.toLowerCase().replace(/^\[|\]$/g, '');
  return n === 'localhost' || n === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(n);
}
