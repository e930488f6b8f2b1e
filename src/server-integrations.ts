// Composition, step 3: what connects the engine to the outside besides HTTP — the Kafka runtime
// (mirror, replica, ingests) and, in cluster mode, the cluster node. Each is opened here and
// started once the HTTP app exists (startIntegrations), which is also where their consumers'
// stops are listed: they stop before the HTTP app, which stops before the engine.
import type { SinkFactory } from './cluster/membership/runtime.js';
import type { ClusterNode } from './cluster/node.js';
import type { ClusterSettings } from './cluster/settings.js';
import type { Engine } from './engine/engine.js';
import { KafkaRuntime } from './kafka/index.js';
import { ImportService } from './service/import/import-service.js';
import type { Boot, StopList } from './stop-list.js';

export interface Integrations {
  kafka: KafkaRuntime;
  cluster: ClusterNode | undefined;
}

export async function openIntegrations(
  { cfg, logger, onFatal, stops }: Boot,
  clusterCfg: ClusterSettings | undefined,
  engine: Engine,
  id: string,
  clusterSink?: SinkFactory,
): Promise<Integrations> {
  const kafkaCfg = {
    brokers: cfg.kafkaBrokers,
    mirrorTopic: cfg.kafkaMirrorTopic,
    replicaOf: cfg.replicaOf,
    mirrorAck: cfg.kafkaMirrorAck,
    mirrorAckTimeoutMs: cfg.kafkaMirrorAckTimeout,
    // Cluster mode runs the cluster's ingests (below), never this node's alone.
    ...(clusterCfg !== undefined ? { ingestsRefused: 'cluster mode: ingests run through the cluster' } : {}),
  };
  const kafka = await KafkaRuntime.open(kafkaCfg, engine, new ImportService(engine), id, logger, onFatal);
  // Closed after the engine's stop (the root lists that next): the mirror gets a moment to
  // publish the tail the engine flushed.
  stops.add('kafka', () => kafka.close());
  // Loaded only in cluster mode: it brings kafkajs, which a start without Kafka does not load.
  const cluster =
    clusterCfg === undefined
      ? undefined
      : await (await import('./cluster/node.js')).ClusterNode.open({
          cfg,
          engine,
          logger,
          nodeId: id,
          legacyRelease: cfg.legacyRelease,
          ...(clusterSink !== undefined ? { sink: clusterSink } : {}),
        });
  if (cluster !== undefined) kafka.useIngests(cluster.ingests);
  return { kafka, cluster };
}

/**
 * Starts Kafka's consumers and lists the stops of what reads from Kafka into the engine: the
 * cluster first hands its partitions over while this node still answers, then the consumers
 * stop, so no write comes from Kafka while the rest stops. Joining the cluster needs the bound
 * port: `join` is called by the root once it is known.
 */
export function startIntegrations(
  { kafka, cluster }: Integrations,
  stops: StopList,
): { join(bound: { scheme: string; host: string; port: number }): Promise<void> } {
  kafka.start();
  stops.add('kafka consumers', () => kafka.stopConsumers());
  if (cluster !== undefined) stops.add('cluster', () => cluster.stop());
  return { join: async (bound) => cluster?.start(bound) };
}
