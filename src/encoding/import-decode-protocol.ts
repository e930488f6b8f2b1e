// The messages between the request thread and the import decode thread.
import type { ImportRequest, ImportValueRequest } from './import-request.js';

export interface DecodeAsk {
  id: number;
  format: 'bits' | 'values';
  body: Uint8Array;
}

export type DecodeAnswer =
  | { id: number; format: 'bits'; request: ImportRequest }
  | { id: number; format: 'values'; request: ImportValueRequest }
  | { id: number; error: string };

/** The buffers under a decoded request's arrays, each once (two arrays may share one). */
export function decodedBuffers(r: ImportRequest | ImportValueRequest): ArrayBuffer[] {
  const arrays = 'values' in r ? [r.columnIds, r.values] : [r.rowIds, r.columnIds, r.timestamps];
  const out = new Set<ArrayBuffer>();
  for (const a of arrays) if (a !== null && a.buffer instanceof ArrayBuffer) out.add(a.buffer);
  return [...out];
}
