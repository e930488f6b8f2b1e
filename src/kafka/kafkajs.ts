// kafkajs, loaded once through here so that its consumers filter aborted transactions correctly
// (aborted-transactions.ts says what is wrong with its own filter). kafkajs's Batch takes its
// filter with require() when it loads, so the corrected one goes into the module cache first;
// kafkajs loaded by anything else before this runs would keep the faulty filter, and that is
// refused loudly rather than left to leak aborted commands into a holder. Two producer steps are
// made faster the same way (kafkajs-producer-speed.ts), and each connection's request queue stops
// its 1 ms timer loop while nothing is queued (kafkajs-idle-queue.ts).
import { createRequire } from 'node:module';
import { type AbortedTransaction, type FetchedRecord, withoutAborted } from './aborted-transactions.js';
import { quietIdleQueues } from './kafkajs-idle-queue.js';
import { speedUpProducer } from './kafkajs-producer-speed.js';

export type KafkaJs = typeof import('kafkajs');

const require = createRequire(import.meta.url);
let loaded: KafkaJs | undefined;

/** The kafkajs module, with the corrected read-committed filter. */
export function kafkajs(): KafkaJs {
  if (loaded !== undefined) return loaded;
  const filterPath = require.resolve('kafkajs/src/consumer/filterAbortedMessages.js');
  const batchPath = require.resolve('kafkajs/src/consumer/batch.js');
  if (require.cache[batchPath] !== undefined && !isCorrected(require.cache[filterPath]?.exports))
    throw new Error('kafkajs was loaded before its aborted-transaction filter was corrected (src/kafka/kafkajs.ts)');
  require(filterPath);
  const entry = require.cache[filterPath];
  if (entry === undefined) throw new Error(`kafkajs: ${filterPath} is not in the module cache`);
  if (!isCorrected(entry.exports)) {
    const corrected = ({ messages, abortedTransactions }: KafkajsFilterArgs): FetchedRecord[] =>
      withoutAborted(messages, abortedTransactions);
    entry.exports = Object.assign(corrected, { [CORRECTED]: true });
  }
  speedUpProducer(require);
  quietIdleQueues(require);
  loaded = require('kafkajs') as KafkaJs;
  return loaded;
}

interface KafkajsFilterArgs {
  messages: FetchedRecord[];
  abortedTransactions?: AbortedTransaction[];
}

const CORRECTED = Symbol.for('bitledger.kafkajs.abortedFilter');

function isCorrected(x: unknown): boolean {
  return typeof x === 'function' && (x as unknown as Record<symbol, unknown>)[CORRECTED] === true;
}
