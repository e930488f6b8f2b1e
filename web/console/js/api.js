// Calls to the server this page came from. Every call asks for JSON explicitly: the query
// endpoint answers protobuf to clients that do not.

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function errorMessage(status, text) {
  try {
    const body = JSON.parse(text);
    if (typeof body.error === 'string') return body.error;
    if (body.error && typeof body.error.message === 'string') return body.error.message;
    if (typeof body.reason === 'string') return body.reason;
  } catch {
    // not JSON: the text is the message
  }
  return text.trim() || `HTTP ${status}`;
}

async function call(method, path, body) {
  const init = { method, headers: { Accept: 'application/json' } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['Content-Type'] = typeof body === 'string' ? 'text/plain' : 'application/json';
  }
  const res = await fetch(path, init);
  const text = await res.text();
  if (!res.ok) throw new ApiError(res.status, errorMessage(res.status, text));
  return text === '' ? null : JSON.parse(text);
}

export const api = {
  get: (path) => call('GET', path),
  post: (path, body) => call('POST', path, body),
  del: (path) => call('DELETE', path),
  /** GET that answers undefined instead of failing when the route is absent or errs: optional panels. */
  async optional(path) {
    try {
      return await call('GET', path);
    } catch {
      return undefined;
    }
  },
  /** GET whose non-2xx answers are figures too (/ready says why it is not ready): {status, body}, or undefined when absent. */
  async probe(path) {
    try {
      const res = await fetch(path, { headers: { Accept: 'application/json' } });
      if (res.status === 404) return undefined;
      const text = await res.text();
      let body;
      try {
        body = JSON.parse(text);
      } catch {
        body = text.trim();
      }
      return { status: res.status, body };
    } catch {
      return undefined;
    }
  },
  query: (index, pql) => call('POST', `/index/${encodeURIComponent(index)}/query`, pql),
};
