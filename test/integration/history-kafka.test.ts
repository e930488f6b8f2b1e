// Restore from the Kafka mirror topic (a real broker): the phased workload on a mirrored primary,
// then `restore --from-kafka` to every noted point, by sequence and by time, each served by a
// fresh server and compared with what the primary answered at that moment.
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { restoreCommand } from '../../src/cli/restore.js';
import { removeDir, startServer, tempDir, type TestServer } from '../helpers/server.js';
import { PHASES, answers, newest, pause, type Point } from './history-workload.js';
import { kafkaServerPool, uniqueTopic, waitFor } from './kafka-support.js';

const pool = kafkaServerPool();
const quiet = pino({ level: 'silent' });
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDir(d);
});

async function restored(args: string[]): Promise<{ answers: string; seq: number }> {
  const dest = join(tempDir(), 'restored');
  dirs.push(dest);
  await restoreCommand([...args, '--data-dir', dest], quiet, () => undefined);
  const s = await startServer({ dataDir: dest });
  try {
    return { answers: await answers(s), seq: s.engine.appliedSeq };
  } finally {
    await s.close();
  }
}

describe('restore --from-kafka', () => {
  it('reproduces every noted point from the mirror topic, by sequence and by time; refuses a point past the topic', async () => {
    const topic = uniqueTopic('history-mirror');
    const primary: TestServer = await pool.start({ kafkaMirrorTopic: topic });
    const points: Point[] = [];
    for (const [name, run] of PHASES) {
      await run(primary);
      const n = await newest(primary);
      points.push({ name, seq: n.seq, time: n.time, answers: await answers(primary) });
      await pause(5);
    }
    const last = points[points.length - 1].seq;
    await waitFor('mirror caught up', async () => {
      const r = await primary.app.inject({ method: 'GET', url: '/kafka/mirror' });
      return (JSON.parse(r.body) as { ackedSeq: number }).ackedSeq >= last;
    });
    const kafka = ['--from-kafka', topic, '--kafka-brokers', pool.brokers.join(',')];
    for (const p of [points[0], points[2], points[4], points[6]]) {
      const bySeq = await restored([...kafka, '--to-seq', String(p.seq)]);
      expect(bySeq.seq, p.name).toBe(p.seq);
      expect(bySeq.answers, `${p.name} by seq`).toBe(p.answers);
      const byTime = await restored([...kafka, '--to-time', p.time]);
      expect(byTime.answers, `${p.name} by time`).toBe(p.answers);
    }
    const dest = join(tempDir(), 'refused');
    dirs.push(dest);
    await expect(
      restoreCommand([...kafka, '--to-seq', String(last + 100), '--data-dir', dest], quiet, () => undefined),
    ).rejects.toThrow(new RegExp(`outside the topic: it holds sequence 1 to ${last}`));
  }, 180_000);
});
