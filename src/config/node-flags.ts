// V8 flags the server is started with (package.json's start, the Dockerfile, the bin's shebang,
// and the test and bench children). V8 counts external memory (request bodies, decoded ID arrays,
// Kafka buffers: ArrayBuffers and addon memory) allocated since the last full collection against
// the old generation's limit, which for a small heap (~20 MB live here) leaves ~8 MB of slack: a
// ~1 MB import allocates more than that, so every import started a full mark-compact that freed
// almost nothing (60 in 64 cluster imports over three nodes). A larger initial old generation
// keeps that slack above an import's churn: 7 mark-compacts in the same 64 imports. The flag must
// be on node's command line: v8.setFlagsFromString at run time no longer changes the heap's
// configuration (measured: 53 mark-compacts), and NODE_OPTIONS refuses it.
export const SERVER_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=64'];
