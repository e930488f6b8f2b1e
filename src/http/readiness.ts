// Whether this node serves correctly (GET /ready, /status): a load balancer must stop sending
// traffic to a node that is still replaying, stopping, failed after a storage error, whose
// replica stopped following, or whose Kafka mirror cannot publish.
import type { Engine } from '../engine/engine.js';
import type { ReplayProgress } from '../metrics/server-metrics.js';

/** What readiness reads of the Kafka runtime (http/ does not import kafka/; app.ts passes it). */
export interface KafkaHealth {
  readonly replica?: { status(): { state: string; topic: string; lastError?: string | null } };
  readonly mirror?: { status(): { state: string; topic: string; lastError?: string | null } };
}

export type Readiness = { ready: true } | { ready: false; reason: string };

export function startingReason(p: ReplayProgress): string {
  return p.phase === 'snapshot'
    ? 'starting: loading the newest snapshot'
    : `starting: replaying the log (${p.done}/${p.total} events)`;
}

export function readiness(engine: Engine, kafka: KafkaHealth | undefined): Readiness {
  if (engine.state === 'STOPPING') return { ready: false, reason: 'stopping' };
  if (engine.state === 'FAILED') return { ready: false, reason: 'failed after a storage error; restart the server' };
  const replica = kafka?.replica?.status();
  if (replica?.state === 'failed')
    return {
      ready: false,
      reason: `replica of Kafka topic "${replica.topic}" failed: ${replica.lastError ?? 'unknown error'}`,
    };
  const mirror = kafka?.mirror?.status();
  if (mirror?.state === 'retrying')
    return {
      ready: false,
      reason: `Kafka mirror to topic "${mirror.topic}" is failing: ${mirror.lastError ?? 'unknown error'}`,
    };
  return { ready: true };
}
