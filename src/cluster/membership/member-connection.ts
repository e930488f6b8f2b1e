// A POST to another member and its whole answer, over kept-alive TCP connections written and read
// here: the read fan-out makes one such call per member a query needs, and node:http's client
// (ClientRequest, the agent's bookkeeping, its parser and IncomingMessage stream) cost more CPU
// a call than the query's own work there. One request at a time per connection; the answer is
// read by its Content-Length, chunked, or until the member closes the connection. Its only caller
// is the read fan-out (a call sent twice reads twice, changes nothing).
import { type Socket, connect } from 'node:net';

export interface MemberAnswer {
  status: number;
  text: string;
}

/** Idle connections by "host:port". */
const IDLE = new Map<string, MemberConnection[]>();
/** Parsed targets by URL (a node asks the same few URLs over and over). */
const TARGETS = new Map<string, Target>();
const TARGETS_MAX = 256;
const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

interface Target {
  key: string;
  host: string;
  port: number;
  /** The request line and Host header. */
  head: string;
}

function targetOf(url: string): Target {
  let t = TARGETS.get(url);
  if (t === undefined) {
    const u = new URL(url);
    if (u.protocol !== 'http:') throw new Error(`member call: ${u.protocol} is not supported (${url})`);
    const port = u.port === '' ? 80 : Number(u.port);
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    t = { key: `${host}:${port}`, host, port, head: `POST ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\n` };
    if (TARGETS.size >= TARGETS_MAX) TARGETS.clear();
    TARGETS.set(url, t);
  }
  return t;
}

/** POSTs `body` (JSON text) to `url`; rejects on a connection failure or when `signal` aborts. */
export function postMember(
  url: string,
  body: string,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<MemberAnswer> {
  if (signal?.aborted === true) return Promise.reject(abortError());
  let t: Target;
  try {
    t = targetOf(url);
  } catch (err) {
    return Promise.reject(err);
  }
  let head = t.head;
  for (const k in headers) head += `${k}: ${headers[k]}\r\n`;
  head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const idle = IDLE.get(t.key)?.pop();
  return (idle ?? new MemberConnection(t)).request(head + body, signal, idle !== undefined);
}

function abortError(): Error {
  return Object.assign(new Error('This operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' });
}

type BodyMode = { kind: 'length'; left: number } | { kind: 'chunked' } | { kind: 'close' };

class MemberConnection {
  private readonly socket: Socket;
  private buf: Buffer = Buffer.alloc(0);
  private call:
    | {
        resolve(a: MemberAnswer | Promise<MemberAnswer>): void;
        reject(e: unknown): void;
        signal?: AbortSignal;
        onAbort(): void;
        text: string;
        /** Sent on a connection kept from an earlier call (which the member may have just closed). */
        reused: boolean;
      }
    | undefined;
  /** The answer being read: its status once the head is in, its body so far. */
  private status = 0;
  private mode: BodyMode | undefined;
  private keep = true;
  private chunks: Buffer[] = [];
  private closed = false;

  constructor(private readonly target: Target) {
    this.socket = connect({ host: target.host, port: target.port, noDelay: true });
    this.socket.on('data', (c: Buffer) => this.onData(c));
    this.socket.on('error', (err) => this.fail(err));
    this.socket.on('close', () => this.fail(hangUp()));
    this.socket.on('end', () => this.onEnd());
  }

  request(text: string, signal: AbortSignal | undefined, reused: boolean): Promise<MemberAnswer> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.fail(abortError());
      };
      this.call = { resolve, reject, signal, onAbort, text, reused };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.socket.ref();
      this.socket.write(text);
    });
  }

  private onData(c: Buffer): void {
    if (this.call === undefined) {
      // Bytes nobody asked for: the connection is out of step, never reused.
      this.socket.destroy();
      return;
    }
    this.buf = this.buf.length === 0 ? c : Buffer.concat([this.buf, c]);
    try {
      this.parse();
    } catch (err) {
      this.fail(err);
    }
  }

  private parse(): void {
    if (this.mode === undefined) {
      const end = this.buf.indexOf(HEAD_END);
      if (end < 0) return;
      this.readHead(this.buf.toString('latin1', 0, end));
      this.buf = this.buf.subarray(end + 4);
    }
    const mode = this.mode;
    if (mode === undefined) return;
    if (mode.kind === 'length') {
      const take = Math.min(mode.left, this.buf.length);
      if (take > 0) this.chunks.push(this.buf.subarray(0, take));
      mode.left -= take;
      this.buf = this.buf.subarray(take);
      if (mode.left === 0) this.done();
    } else if (mode.kind === 'chunked') {
      for (;;) {
        const line = this.buf.indexOf(CRLF);
        if (line < 0) return;
        const size = Number.parseInt(this.buf.toString('latin1', 0, line), 16);
        if (!Number.isFinite(size) || size < 0) throw new Error('member call: malformed chunked answer');
        if (size === 0) {
          // The last chunk, then trailers (none expected) up to an empty line.
          const rest = this.buf.subarray(line + 2);
          if (rest.length >= 2 && rest[0] === 13 && rest[1] === 10) {
            this.buf = rest.subarray(2);
            this.done();
            return;
          }
          const end = rest.indexOf(HEAD_END);
          if (end < 0) return;
          this.buf = rest.subarray(end + 4);
          this.done();
          return;
        }
        if (this.buf.length < line + 2 + size + 2) return;
        this.chunks.push(this.buf.subarray(line + 2, line + 2 + size));
        this.buf = this.buf.subarray(line + 2 + size + 2);
      }
    } else {
      if (this.buf.length > 0) this.chunks.push(this.buf);
      this.buf = Buffer.alloc(0);
    }
  }

  private readHead(head: string): void {
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (m === null) throw new Error('member call: malformed answer');
    this.status = Number(m[1]);
    let length: number | undefined;
    let chunked = false;
    this.keep = lines[0].startsWith('HTTP/1.1');
    for (let i = 1; i < lines.length; i++) {
      const l = lines[i];
      const colon = l.indexOf(':');
      if (colon < 0) continue;
      const name = l.slice(0, colon).trim().toLowerCase();
      const value = l
        .slice(colon + 1)
        .trim()
        .toLowerCase();
      if (name === 'content-length') length = Number(value);
      else if (name === 'transfer-encoding') chunked = value.includes('chunked');
      else if (name === 'connection')
        this.keep = value.includes('keep-alive') || (this.keep && !value.includes('close'));
    }
    if (chunked) this.mode = { kind: 'chunked' };
    else if (length !== undefined) {
      if (!Number.isSafeInteger(length) || length < 0) throw new Error('member call: malformed Content-Length');
      this.mode = { kind: 'length', left: length };
    } else this.mode = { kind: 'close' };
  }

  /** The member closed its side: an answer read until then is whole. */
  private onEnd(): void {
    if (this.call !== undefined && this.mode?.kind === 'close') {
      this.keep = false;
      this.done();
    }
    this.socket.end();
  }

  private done(): void {
    const call = this.call;
    if (call === undefined) return;
    const answer = { status: this.status, text: Buffer.concat(this.chunks).toString('utf8') };
    this.call = undefined;
    call.signal?.removeEventListener('abort', call.onAbort);
    this.mode = undefined;
    this.status = 0;
    this.chunks = [];
    if (this.keep && this.buf.length === 0 && !this.closed) this.idle();
    else this.socket.destroy();
    call.resolve(answer);
  }

  /** Back to the pool, not keeping the process alive while it waits there. */
  private idle(): void {
    this.socket.unref();
    let list = IDLE.get(this.target.key);
    if (list === undefined) IDLE.set(this.target.key, (list = []));
    list.push(this);
  }

  private fail(err: unknown): void {
    if (!this.closed) {
      this.closed = true;
      const list = IDLE.get(this.target.key);
      const at = list?.indexOf(this) ?? -1;
      if (list !== undefined && at >= 0) list.splice(at, 1);
      this.socket.destroy();
    }
    const call = this.call;
    if (call === undefined) return;
    this.call = undefined;
    call.signal?.removeEventListener('abort', call.onAbort);
    // A kept connection the member closed as this call went out (its idle timeout): nothing of
    // an answer came, so the call is sent once more on a new connection (it only reads).
    const code = (err as { code?: unknown }).code;
    if (call.reused && this.status === 0 && this.buf.length === 0 && (code === 'ECONNRESET' || code === 'EPIPE'))
      call.resolve(new MemberConnection(this.target).request(call.text, call.signal, false));
    else call.reject(err);
  }
}

/** What node:http says when a connection closes before the answer. */
function hangUp(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}
