// The import prepare thread (import-prepare-thread.ts): decodes a bits import's body and builds its
// events from copies of its index's and field's options, and hands their records back. No engine
// state lives here: the request thread checks, as it commits them, that they still fit.
import { parentPort } from 'node:worker_threads';
import { decodeImportRequest } from '../../encoding/import-request.js';
import { runSteps } from '../../util/steps.js';
import { warmImportPath } from '../../http/import-warmup.js';
import { buildBitsEvents } from '../../service/import/prepare-bits.js';
import { type PrepareAnswer, type PrepareAsk, recordBuffers } from './import-prepare-protocol.js';

const port = parentPort;
if (port === null) throw new Error('import prepare worker started outside a worker thread');

// Before the first import's message is taken (it waits meanwhile): the thread starts with the node.
runSteps(warmImportPath());

port.on('message', ({ id, index, field, where, exists, body }: PrepareAsk) => {
  let answer: PrepareAnswer;
  try {
    const wide = { ...decodeImportRequest(body), ...where };
    answer = { id, records: runSteps(buildBitsEvents(index, field, wide, exists)).map((e) => e.record) };
  } catch (err) {
    answer = { id, error: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(answer, 'records' in answer ? recordBuffers(answer.records) : []);
});
