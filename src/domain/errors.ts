// Bad input is a DomainError with a stable code; the HTTP layer maps the code to a status and
// renders Pilosa's body shape. Nothing that throws a DomainError may have mutated state.
export type ErrorCode =
  | 'bad_request' // 400
  | 'forbidden' // 403 (e.g. a write with a read-only token)
  | 'not_found' // 404
  | 'conflict' // 409
  | 'method_not_allowed' // 405
  | 'not_acceptable' // 406
  | 'too_large' // 413
  | 'unsupported_media' // 415
  | 'unavailable' // 503 (e.g. read-only replica, shutting down)
  | 'insufficient_storage'; // 507 (disk below its reserve: writes wait, reads go on)

export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    /**
     * A stable name for a case another program acts on (a cluster coordinator, a client), sent as
     * `code` in the JSON body beside the message, so callers match on it instead of the text.
     */
    readonly reason?: string,
  ) {
    super(message);
  }
}

export const badRequest = (msg: string): DomainError => new DomainError('bad_request', msg);
export const notFound = (msg: string): DomainError => new DomainError('not_found', msg);
export const conflict = (msg: string): DomainError => new DomainError('conflict', msg);
