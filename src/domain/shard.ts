// Shard math: a column lives in shard floor(col / 2^20) at offset col % 2^20 (Pilosa's ShardWidth).
export const SHARD_BITS = 20;
export const SHARD_WIDTH = 1 << SHARD_BITS; // 1048576

export const shardOf = (column: number): number => Math.floor(column / SHARD_WIDTH);
export const offsetOf = (column: number): number => column % SHARD_WIDTH;
