// This node's applied position in every partition of the cluster's topics (the next offset to
// read), loaded from the log's metadata at start and moved by the consumers after each durable
// delivery, with the waits that queries and writes park on until a position is reached.
import { DomainError } from '../../domain/errors.js';
import type { Engine } from '../../engine/engine.js';
import { decodePosition } from './position.js';
import { type ClusterTopic, positionKey } from '../types.js';

interface Waiter {
  next: bigint;
  resolve(): void;
  reject(err: Error): void;
}

export class Positions {
  private readonly at = new Map<string, bigint>();
  private readonly waiters = new Map<string, Set<Waiter>>();

  /** Reads the stored positions of NAME.meta and every partition of NAME.log. */
  static async load(engine: Engine, partitions: number): Promise<Positions> {
    const out = new Positions();
    const keys = [positionKey('meta', 0), ...Array.from({ length: partitions }, (_, p) => positionKey('log', p))];
    for (const key of keys) out.at.set(key, decodePosition(await engine.cursors.get(key), key));
    return out;
  }

  get(topic: ClusterTopic, partition: number): bigint {
    return this.at.get(positionKey(topic, partition)) ?? 0n;
  }

  /** After a durable delivery: moves the position forward and wakes the waits it satisfies. */
  advance(topic: ClusterTopic, partition: number, next: bigint): void {
    const key = positionKey(topic, partition);
    if (next <= (this.at.get(key) ?? 0n)) return;
    this.at.set(key, next);
    const ws = this.waiters.get(key);
    if (ws === undefined) return;
    for (const w of ws) {
      if (w.next <= next) {
        ws.delete(w);
        w.resolve();
      }
    }
  }

  /**
   * Resolves once the position reaches `next`; rejects when `signal` aborts, after `timeoutMs`
   * (with `timeout.text`), or when failAll() is called for the partition.
   */
  wait(
    topic: ClusterTopic,
    partition: number,
    next: bigint,
    signal?: AbortSignal,
    timeout?: { ms: number; text: string },
  ): Promise<void> {
    if (this.get(topic, partition) >= next) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(aborted(topic, partition));
    const key = positionKey(topic, partition);
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.get(key)?.delete(w);
      };
      const w: Waiter = {
        next,
        resolve: () => {
          done();
          resolve();
        },
        reject: (err) => {
          done();
          reject(err);
        },
      };
      const onAbort = (): void => w.reject(aborted(topic, partition));
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeout !== undefined)
        timer = setTimeout(() => w.reject(new DomainError('unavailable', timeout.text)), timeout.ms);
      let ws = this.waiters.get(key);
      if (ws === undefined) this.waiters.set(key, (ws = new Set()));
      ws.add(w);
    });
  }

  /** Rejects every wait on a partition (it moved away, or the node stops). */
  failAll(topic: ClusterTopic, partition: number, err: Error): void {
    for (const w of [...(this.waiters.get(positionKey(topic, partition)) ?? [])]) w.reject(err);
  }

  /** Rejects every wait of every partition. */
  failEverything(err: Error): void {
    for (const ws of this.waiters.values()) for (const w of [...ws]) w.reject(err);
  }
}

const aborted = (topic: ClusterTopic, partition: number): DomainError =>
  new DomainError('unavailable', `gave up waiting for cluster ${topic} partition ${partition} to be applied`);
