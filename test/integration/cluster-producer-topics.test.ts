// A cluster producer learns the metadata of the topics it writes as it starts, so a node's first
// write after a start is one produce request, not a metadata round and then the produce (on a
// real broker; the requests are kafkajs's own instrumentation events of that producer).
import type { Kafka, Producer } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ClusterProducer } from '../../src/cluster/commands/producer.js';
import type { Command } from '../../src/cluster/commands/command.js';
import { createClusterTopics, realPartsForFile } from './cluster-write-support.js';

const { kafka: brokerClient, open } = realPartsForFile();

/** The Kafka client, recording the API name of every request its producers send. */
function recording(kafka: Kafka, requests: string[]): Kafka {
  const producer = (...args: Parameters<Kafka['producer']>): Producer => {
    const p = kafka.producer(...args);
    p.on(p.events.REQUEST, (e) => requests.push(e.payload.apiName));
    return p;
  };
  return Object.assign(Object.create(kafka) as Kafka, { producer });
}

const CREATE_INDEX: Command = {
  kind: 'schema',
  schema: { op: 'createIndex', index: 'i', options: { keys: false, trackExistence: true } },
};

/** The requests of a producer's first write after its start. */
async function firstWrite(topics: boolean): Promise<string[]> {
  const name = await createClusterTopics(brokerClient());
  const requests: string[] = [];
  const meta = `${name}.meta`;
  const producer = new ClusterProducer(recording(brokerClient(), requests), `${name}-a`, {
    transactionSlots: 1,
    ...(topics ? { topics: [meta, `${name}.log`] } : {}),
  });
  await producer.start();
  open.push({ close: () => producer.stop() });
  requests.length = 0;
  await producer.send([{ topic: meta, partition: 0, command: CREATE_INDEX }]);
  return requests;
}

describe('the cluster producer knows its topics from the start', () => {
  it('sends a first write as one produce request', async () => {
    expect(await firstWrite(true)).toEqual(['Produce']);
  });

  it('without them, the first write waits for a metadata round (what the start spares)', async () => {
    expect(await firstWrite(false)).toEqual(['Metadata', 'Produce']);
  });
});
