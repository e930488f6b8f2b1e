// `bitledger restore --from-kafka TOPIC --kafka-brokers B --data-dir NEW [--to-seq N | --to-time T]`:
// the mirror topic as an archive. From an empty start, the topic's records (headers bl-seq,
// bl-time; src/kafka/mirror-format.ts) are appended to a new log up to the target, with their
// commit times, then sealed as any restore (replayed through bootstrap, snapshotted). The topic
// is read once, in order, up to its end at the start of the restore.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import { rfc3339, type Target } from '../engine/history.js';
import { sealRestore } from '../engine/restore-seal.js';
import { createKafka } from '../kafka/client.js';
import { MirrorAssembler, type MirrorRecord } from '../kafka/mirror-format.js';
import { EventLog, SnapshotStore, type LogRecord } from '../storage/index.js';
import { UsageError } from './args.js';
import { progress } from './progress.js';
import { restoreCheckpoints } from './restore-source.js';

const MAX_PIECE = 10_000;

export async function restoreFromKafka(
  topic: string,
  brokers: string[],
  dest: string,
  target: Target | undefined,
  logger: Logger,
  out: (line: string) => void,
): Promise<void> {
  const kafka = await createKafka(brokers, 'bitledger-restore', logger);
  const admin = kafka.admin();
  let end: number;
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(topic))
      throw new UsageError(`restore: topic ${topic} does not exist on ${brokers.join(',')}`);
    const offsets = await admin.fetchTopicOffsets(topic);
    end = Number(offsets.find((o) => o.partition === 0)?.high ?? 0);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`restore: cannot read topic ${topic} from ${brokers.join(',')}: ${(err as Error).message}`);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  if (end === 0) throw new UsageError(`restore: topic ${topic} is empty`);
  const log = await EventLog.open(dest, { fsync: 'interval', fsyncIntervalMs: 60_000, logger });
  let ok = false;
  try {
    const snapshots = await SnapshotStore.open(dest, logger);
    const range = await copyTopic(kafka, topic, end, log, target, out);
    if (target !== undefined && 'seq' in target && target.seq !== log.lastSeq)
      throw new UsageError(
        `restore: sequence ${target.seq} is outside the topic: it holds sequence 1 to ${range.last}`,
      );
    if (target !== undefined && 'timeMs' in target && log.lastSeq === 0)
      throw new UsageError(
        `restore: time ${rfc3339(target.timeMs)} is outside the topic: it holds ${rfc3339(range.firstTime ?? undefined) ?? 'records without times'} to ${rfc3339(range.lastTime ?? undefined)}`,
      );
    await sealRestore(log, snapshots, log.lastSeq, logger, restoreCheckpoints());
    const time = await log.commitTime(log.lastSeq);
    out(
      `restored sequence ${log.lastSeq}${time === undefined ? '' : ` (committed ${rfc3339(time)})`} from topic ${topic} (it holds sequence 1 to ${range.last}), into ${dest}`,
    );
    ok = true;
  } finally {
    await log.close();
    if (!ok) await rm(dest, { recursive: true, force: true });
  }
}

/** Appends the topic's records 1..target to `log`; returns what the topic held up to `end`. */
async function copyTopic(
  kafka: Awaited<ReturnType<typeof createKafka>>,
  topic: string,
  end: number,
  log: EventLog,
  target: Target | undefined,
  out: (line: string) => void,
): Promise<{ last: number; firstTime: number | null; lastTime: number | null }> {
  const consumer = kafka.consumer({ groupId: `bitledger-restore-${randomUUID()}`, allowAutoTopicCreation: false });
  const assembler = new MirrorAssembler();
  const bar = progress('restore', end, 'messages', out);
  const copy = recordCopier(topic, log, target);
  let failure: unknown;
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          autoCommit: false,
          eachBatch: async ({ batch }) => {
            try {
              for (const msg of batch.messages) {
                if (Number(msg.offset) >= end) break;
                const rec = assembler.push(msg);
                if (rec !== undefined) await copy.take(rec);
                bar.update(Number(msg.offset) + 1);
                if (Number(msg.offset) >= end - 1) {
                  await copy.flush();
                  resolve();
                }
              }
            } catch (err) {
              failure = err;
              resolve();
            }
          },
        })
        .catch(reject);
    });
  } finally {
    bar.stop();
    await consumer.disconnect().catch(() => undefined);
  }
  if (failure !== undefined) throw failure;
  return copy.copied();
}

/**
 * Takes the topic's records in order into `log`, in pieces of one commit time, up to `target`;
 * refuses a gap (records deleted by the topic's retention).
 */
function recordCopier(topic: string, log: EventLog, target: Target | undefined) {
  let piece: LogRecord[] = [];
  let pieceTime: number | null = null;
  let stopped = false;
  let firstTime: number | null = null;
  let lastTime: number | null = null;
  let last = 0;
  const flush = async (): Promise<void> => {
    if (piece.length > 0) await log.append(piece, [], { timeMs: pieceTime });
    piece = [];
  };
  const take = async (rec: MirrorRecord): Promise<void> => {
    if (rec.seq <= last) return; // a re-send after a producer retry
    if (rec.seq !== last + 1) {
      throw new UsageError(
        last === 0
          ? `restore: topic ${topic} starts at sequence ${rec.seq}, not 1 (older records were deleted by the topic's retention): restore from a backup instead`
          : `restore: topic ${topic} jumps from sequence ${last} to ${rec.seq}`,
      );
    }
    last = rec.seq;
    firstTime ??= rec.timeMs;
    lastTime = rec.timeMs ?? lastTime;
    if (stopped) return;
    const past =
      target !== undefined &&
      ('seq' in target ? rec.seq > target.seq : rec.timeMs !== null && rec.timeMs > target.timeMs);
    if (past) {
      stopped = true;
      return;
    }
    if (piece.length >= MAX_PIECE || (piece.length > 0 && rec.timeMs !== pieceTime)) await flush();
    if (piece.length === 0) pieceTime = rec.timeMs;
    piece.push({ seq: rec.seq, type: rec.type, payload: rec.payload });
  };
  const copied = (): { last: number; firstTime: number | null; lastTime: number | null } => ({
    last,
    firstTime,
    lastTime,
  });
  return { take, flush, copied };
}
