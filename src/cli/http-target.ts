// A bitledger (or Pilosa) server as the CLI commands see it: JSON and protobuf requests over
// keep-alive HTTP, failures as one-line errors naming the request.
import { ConfigError } from '../config/config.js';

export class RemoteError extends Error {
  override name = 'RemoteError';
}

export interface FieldInfo {
  index: string;
  field: string;
  indexKeys: boolean;
  fieldKeys: boolean;
  type: string;
}

interface SchemaJson {
  indexes?: {
    name: string;
    options?: { keys?: boolean };
    fields?: { name: string; options?: { type?: string; keys?: boolean } }[];
  }[];
}

export class HttpTarget {
  readonly base: string;

  constructor(url: string) {
    const withScheme = /^https?:\/\//.test(url) ? url : `http://${url}`;
    try {
      this.base = new URL(withScheme).toString().replace(/\/$/, '');
    } catch {
      throw new ConfigError(`--url must be a server address like http://127.0.0.1:10101, got ${url}`);
    }
  }

  async request(
    method: string,
    path: string,
    body?: Uint8Array | string,
    contentType?: string,
    accept?: string,
  ): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        body,
        headers: { ...(contentType ? { 'content-type': contentType } : {}), ...(accept ? { accept } : {}) },
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new RemoteError(`cannot reach ${this.base}: ${cause?.code ?? cause?.message ?? String(err)}`);
    }
    if (!res.ok) {
      const text = (await res.text()).trim();
      let msg = text;
      try {
        const j = JSON.parse(text) as { error?: string | { message?: string }; message?: string };
        msg = typeof j.error === 'string' ? j.error : (j.error?.message ?? j.message ?? text);
      } catch {
        // not JSON: the text as is
      }
      throw new RemoteError(`${method} ${path}: ${res.status} ${msg.split('\n')[0].slice(0, 300)}`);
    }
    return res;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      'application/json',
    );
    return (await res.json()) as T;
  }

  /** The field's key and type options, or undefined when the index or field does not exist. */
  async field(index: string, field: string): Promise<FieldInfo | undefined> {
    const schema = await this.json<SchemaJson>('GET', '/schema');
    const idx = schema.indexes?.find((i) => i.name === index);
    const f = idx?.fields?.find((x) => x.name === field);
    if (idx === undefined || f === undefined) return undefined;
    return {
      index,
      field,
      indexKeys: idx.options?.keys === true,
      fieldKeys: f.options?.keys === true,
      type: f.options?.type ?? 'set',
    };
  }
}
