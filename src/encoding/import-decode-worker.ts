// The import decode thread (import-decode-thread.ts): decodes bodies copied to it and hands the
// typed arrays back by transfer. Pure JS only: no engine state lives here.
import { parentPort } from 'node:worker_threads';
import { type DecodeAsk, type DecodeAnswer, decodedBuffers } from './import-decode-protocol.js';
import { decodeImportRequest, decodeImportValueRequest } from './import-request.js';

const port = parentPort;
if (port === null) throw new Error('import decode worker started outside a worker thread');

port.on('message', ({ id, format, body }: DecodeAsk) => {
  let answer: DecodeAnswer;
  try {
    answer =
      format === 'bits'
        ? { id, format, request: decodeImportRequest(body) }
        : { id, format, request: decodeImportValueRequest(body) };
  } catch (err) {
    answer = { id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(answer, 'request' in answer ? decodedBuffers(answer.request) : []);
});
