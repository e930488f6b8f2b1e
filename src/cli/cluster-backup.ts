// `bitledger backup --url <any node of a cluster> --to PATH` (docs/CLUSTER.md, "Backup and
// restore"): every member takes a snapshot now and the backup keeps, for each partition of the
// cluster's topics, the node snapshot that covers it furthest, with the positions each covers
// (its CommandApplied marks). PATH then holds:
//   manifest.json   format, cluster, partitions, when, and per snapshot: file, size, sha256, node,
//                   sequence and the marks (topic, partition, position, newest time)
//   snapshots/<node>-<seq>.body   the snapshot bodies as the nodes encoded them
// `restore --cluster-name … --from PATH` starts each partition from them and reads the topics on.
// A later backup to the same PATH replaces the previous one (the manifest goes last, atomically).
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackupSnapshot } from '../cluster/restore/plan.js';
import { snapshotMarks } from '../engine/compose-base.js';
import { fsyncDir } from '../storage/durable-fs.js';
import type { CommandMark } from '../state/holder.js';
import { UsageError } from './args.js';

export const CLUSTER_BACKUP_FORMAT = 'bitledger-cluster-backup';
const MANIFEST = 'manifest.json';

interface ClusterManifest {
  format: typeof CLUSTER_BACKUP_FORMAT;
  version: 1;
  cluster: string;
  partitions: number;
  takenAt: string;
  snapshots: { file: string; bytes: number; sha256: string; node: string; seq: number; marks: CommandMark[] }[];
}

/** GET /cluster of the node at `url`, when it is a cluster member (undefined: a single node). */
export async function clusterOf(
  url: string,
): Promise<{ name: string; partitions: number; members: { id: string; url: string }[] } | undefined> {
  let res: Response;
  try {
    res = await fetch(`${url}/cluster`);
  } catch (err) {
    throw new UsageError(`backup: cannot reach ${url} (${String((err as Error).cause ?? (err as Error).message)})`);
  }
  if (res.status === 404) return undefined;
  if (!res.ok)
    throw new UsageError(`backup: ${url}/cluster answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return (await res.json()) as { name: string; partitions: number; members: { id: string; url: string }[] };
}

async function fetchOk(url: string, init?: RequestInit): Promise<Response> {
  const res = await fetch(url, init);
  if (!res.ok) throw new Error(`${url.split('?')[0]} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return res;
}

/** A fresh snapshot of one member, with its marks. */
async function memberSnapshot(m: { id: string; url: string }): Promise<{ seq: number; body: Uint8Array }> {
  const { seq } = (await (await fetchOk(`${m.url}/internal/snapshot`, { method: 'POST' })).json()) as { seq: number };
  const body = new Uint8Array(await (await fetchOk(`${m.url}/internal/backup/snapshot/${seq}`)).arrayBuffer());
  return { seq, body };
}

const positionOf = (m: CommandMark): bigint => BigInt(m.position.split(';')[0]);

export async function backupCluster(
  cluster: { name: string; partitions: number; members: { id: string; url: string }[] },
  path: string,
  out: (line: string) => void,
): Promise<void> {
  const existing = existsSync(join(path, MANIFEST)) ? await readManifest(path) : undefined;
  if (existing === undefined && existsSync(path) && (await readdir(path)).length > 0)
    throw new UsageError(`backup: ${path} is not empty and holds no cluster backup; back up into a new directory`);
  await mkdir(join(path, 'snapshots'), { recursive: true });
  const taken: { node: string; seq: number; body: Uint8Array; marks: CommandMark[] }[] = [];
  for (const m of cluster.members) {
    try {
      const s = await memberSnapshot(m);
      taken.push({ node: m.id, ...s, marks: snapshotMarks(s.body) });
    } catch (err) {
      out(`backup: node ${m.id} (${m.url}) gave no snapshot: ${(err as Error).message}`);
    }
  }
  // Each partition's furthest snapshot; a snapshot no partition needs is not kept.
  const keep = new Set<number>();
  const furthest = (topic: string, p: number): void => {
    let at = -1;
    let best = -1n;
    taken.forEach((t, i) => {
      const m = t.marks.find((x) => x.topic === topic && x.partition === p);
      if (m !== undefined && positionOf(m) > best) [at, best] = [i, positionOf(m)];
    });
    if (at >= 0) keep.add(at);
    else if (topic === 'log')
      out(`backup: no snapshot covers partition ${p}: a restore reads it from the topic's start`);
  };
  furthest('meta', 0);
  for (let p = 0; p < cluster.partitions; p++) furthest('log', p);
  const manifest: ClusterManifest = {
    format: CLUSTER_BACKUP_FORMAT,
    version: 1,
    cluster: cluster.name,
    partitions: cluster.partitions,
    takenAt: new Date().toISOString(),
    snapshots: [],
  };
  for (const i of [...keep].sort((a, b) => a - b)) {
    const t = taken[i];
    const file = `snapshots/${t.node}-${String(t.seq).padStart(16, '0')}.body`;
    await writeFile(join(path, file), t.body, { flush: true });
    const sha256 = createHash('sha256').update(t.body).digest('hex');
    manifest.snapshots.push({ file, bytes: t.body.byteLength, sha256, node: t.node, seq: t.seq, marks: t.marks });
  }
  const tmp = join(path, `${MANIFEST}.tmp`);
  await writeFile(tmp, `${JSON.stringify(manifest, null, 2)}\n`, { flush: true });
  await rename(tmp, join(path, MANIFEST));
  await fsyncDir(path);
  const now = new Set(manifest.snapshots.map((s) => s.file));
  for (const s of existing?.snapshots ?? [])
    if (!now.has(s.file)) await unlink(join(path, s.file)).catch(() => undefined);
  const bytes = manifest.snapshots.reduce((a, s) => a + s.bytes, 0);
  out(
    `backup ${path}: cluster ${cluster.name}, ${manifest.snapshots.length} node snapshot(s) covering ${cluster.partitions} partitions and the meta topic, ${(bytes / 1e6).toFixed(1)} MB`,
  );
}

async function readManifest(path: string): Promise<ClusterManifest | undefined> {
  const m = JSON.parse(await readFile(join(path, MANIFEST), 'utf8')) as Partial<ClusterManifest>;
  return m.format === CLUSTER_BACKUP_FORMAT ? (m as ClusterManifest) : undefined;
}

/** The snapshots of a cluster backup, each checked against its size and sha256 (UsageError otherwise). */
export async function readClusterBackup(path: string, name: string): Promise<BackupSnapshot[]> {
  const m = existsSync(join(path, MANIFEST)) ? await readManifest(path) : undefined;
  if (m === undefined) throw new UsageError(`restore: ${path} is not a cluster backup (no ${MANIFEST} of one)`);
  if (m.cluster !== name) throw new UsageError(`restore: ${path} is a backup of cluster ${m.cluster}, not of ${name}`);
  const out: BackupSnapshot[] = [];
  for (const s of m.snapshots) {
    const body = await readFile(join(path, s.file)).catch(() => {
      throw new UsageError(`restore: backup file ${s.file} is missing`);
    });
    if (body.byteLength !== s.bytes || createHash('sha256').update(body).digest('hex') !== s.sha256)
      throw new UsageError(`restore: backup file ${s.file} is damaged (size or sha256 differs from the manifest)`);
    out.push({ describe: `node ${s.node}'s snapshot ${s.seq}`, body, marks: snapshotMarks(body) });
  }
  return out;
}
