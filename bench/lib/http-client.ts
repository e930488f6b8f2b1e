// The load generator's HTTP/1.1 client: keep-alive sockets written and parsed directly, like wrk.
// On this 2-core machine client and server share the CPU, and the client's own cost is part of
// every measured latency: node:http costs ~100 µs per request and undici ~45 µs more than this
// (measured with a bare fastify route: p50 0.26 / 0.21 / 0.16 ms). Answers are parsed just enough
// for the benches: status, Content-Length or chunked body.
import { type Socket, connect } from 'node:net';

export interface HttpReply {
  status: number;
  body: Buffer;
}

interface Pending {
  resolve: (r: HttpReply) => void;
  reject: (err: Error) => void;
}

/** One keep-alive connection carrying one request at a time. */
class Connection {
  private buf: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;
  private closedErr: Error | undefined;

  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    const fail = (err: Error): void => {
      this.closedErr = err;
      const p = this.pending;
      this.pending = undefined;
      p?.reject(err);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed by the server')));
  }

  get usable(): boolean {
    return this.closedErr === undefined;
  }

  request(head: string, body: Uint8Array | undefined): Promise<HttpReply> {
    if (this.closedErr) return Promise.reject(this.closedErr);
    return new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      if (body === undefined || body.byteLength === 0) this.socket.write(head, 'latin1');
      else if (body.byteLength < 16_384) this.socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
      else {
        this.socket.write(head, 'latin1');
        this.socket.write(body);
      }
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    const reply = parseReply(this.buf);
    if (reply === undefined) return;
    this.buf = this.buf.subarray(reply.consumed);
    const p = this.pending;
    this.pending = undefined;
    p?.resolve({ status: reply.status, body: reply.body });
  }
}

/** A complete response at the start of `buf`, or undefined while more bytes are needed. */
function parseReply(buf: Buffer): { status: number; body: Buffer; consumed: number } | undefined {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const head = buf.toString('latin1', 0, headEnd);
  const status = Number(head.slice(9, 12));
  const start = headEnd + 4;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length !== null) {
    const end = start + Number(length[1]);
    return buf.length < end ? undefined : { status, body: buf.subarray(start, end), consumed: end };
  }
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) return parseChunked(buf, start, status);
  return { status, body: Buffer.alloc(0), consumed: start };
}

function parseChunked(
  buf: Buffer,
  start: number,
  status: number,
): { status: number; body: Buffer; consumed: number } | undefined {
  const parts: Buffer[] = [];
  let p = start;
  for (;;) {
    const lineEnd = buf.indexOf('\r\n', p);
    if (lineEnd < 0) return undefined;
    const size = parseInt(buf.toString('latin1', p, lineEnd), 16);
    const dataEnd = lineEnd + 2 + size;
    if (buf.length < dataEnd + 2) return undefined;
    if (size === 0) return { status, body: Buffer.concat(parts), consumed: dataEnd + 2 };
    parts.push(buf.subarray(lineEnd + 2, dataEnd));
    p = dataEnd + 2;
  }
}

export class HttpClient {
  private readonly host: string;
  private readonly port: number;
  private readonly idle: Connection[] = [];
  private readonly waiting: ((c: Connection) => void)[] = [];
  private readonly all: Connection[] = [];

  /** `maxSockets`: connections opened at most (one per concurrent request). */
  constructor(
    baseUrl: string,
    private readonly maxSockets = 1,
  ) {
    const u = new URL(baseUrl);
    this.host = u.hostname;
    this.port = Number(u.port);
  }

  async send(
    method: string,
    path: string,
    body?: Uint8Array | string,
    contentType = 'application/json',
  ): Promise<HttpReply> {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    let head = `${method} ${path} HTTP/1.1\r\nHost: ${this.host}:${this.port}\r\n`;
    if (bytes !== undefined) head += `Content-Type: ${contentType}\r\nContent-Length: ${bytes.byteLength}\r\n`;
    head += '\r\n';
    const conn = await this.acquire();
    try {
      return await conn.request(head, bytes);
    } finally {
      this.release(conn);
    }
  }

  /** Like send, but a non-2xx answer is an error naming the request. */
  async ok(method: string, path: string, body?: Uint8Array | string, contentType?: string): Promise<Buffer> {
    const r = await this.send(method, path, body, contentType);
    if (r.status < 200 || r.status >= 300)
      throw new Error(`${method} ${path} → ${r.status}: ${r.body.toString('utf8', 0, 500)}`);
    return r.body;
  }

  close(): void {
    for (const c of this.all) c.destroy();
    this.all.length = 0;
    this.idle.length = 0;
  }

  private async acquire(): Promise<Connection> {
    for (;;) {
      const c = this.idle.pop();
      if (c === undefined) break;
      if (c.usable) return c;
      this.forget(c);
    }
    if (this.all.length < this.maxSockets) {
      const socket = connect(this.port, this.host);
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      const c = new Connection(socket);
      this.all.push(c);
      return c;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(c: Connection): void {
    if (!c.usable) {
      this.forget(c);
      // A waiter gets a fresh connection instead of the broken one.
      const w = this.waiting.shift();
      if (w !== undefined) void this.acquire().then(w);
      return;
    }
    const w = this.waiting.shift();
    if (w !== undefined) w(c);
    else this.idle.push(c);
  }

  private forget(c: Connection): void {
    c.destroy();
    const i = this.all.indexOf(c);
    if (i >= 0) this.all.splice(i, 1);
  }
}
