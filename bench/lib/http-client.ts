// A minimal node:http client over one keep-alive agent (maxSockets = concurrent clients), so the
// load generator measures the server rather than connection setup or fetch's overhead.
import { Agent, request } from 'node:http';

export interface HttpReply {
  status: number;
  body: Buffer;
}

export class HttpClient {
  private readonly agent: Agent;
  private readonly host: string;
  private readonly port: number;

  constructor(baseUrl: string, maxSockets = 1) {
    const u = new URL(baseUrl);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.agent = new Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  }

  send(method: string, path: string, body?: Uint8Array | string, contentType = 'application/json'): Promise<HttpReply> {
    return new Promise((resolve, reject) => {
      const headers: Record<string, string | number> = {};
      if (body !== undefined) {
        headers['content-type'] = contentType;
        headers['content-length'] = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
      }
      const req = request({ host: this.host, port: this.port, method, path, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** Like send, but a non-2xx answer is an error naming the request. */
  async ok(method: string, path: string, body?: Uint8Array | string, contentType?: string): Promise<Buffer> {
    const r = await this.send(method, path, body, contentType);
    if (r.status < 200 || r.status >= 300) throw new Error(`${method} ${path} → ${r.status}: ${r.body.toString('utf8', 0, 500)}`);
    return r.body;
  }

  close(): void {
    this.agent.destroy();
  }
}
