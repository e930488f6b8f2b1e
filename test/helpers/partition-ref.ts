// docs/CLUSTER.md's shard → partition function, written again here with BigInt straight from its
// definition (FNV-1a 64 over the UTF-8 index name, then the shard as 8 bytes big-endian, modulo
// P), so the tests check the server's routing against the documented function, not against itself.
const PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;

export function referencePartitionOf(index: string, shard: number, partitions: number): number {
  let h = 0xcbf29ce484222325n;
  const shardBytes = new Uint8Array(8);
  new DataView(shardBytes.buffer).setBigUint64(0, BigInt(shard), false);
  for (const b of [...new TextEncoder().encode(index), ...shardBytes]) {
    h ^= BigInt(b);
    h = (h * PRIME) & MASK;
  }
  return Number(h % BigInt(partitions));
}

/** The first `count` shards of `index` that live in partition `p`. */
export function shardsOfPartition(index: string, p: number, partitions: number, count: number): number[] {
  const out: number[] = [];
  for (let s = 0; out.length < count; s++) if (referencePartitionOf(index, s, partitions) === p) out.push(s);
  return out;
}
