// In cluster mode every state change comes from the topics; a route that would still write to the
// node's own engine (one this release does not route through the cluster yet) must be refused,
// never applied locally where no other node sees it. The integrator opens the engine with this
// as its readOnlyReason (405, the message below); the applier's writes pass as replicated.
export const CLUSTER_LOCAL_WRITE_REASON =
  'not supported in cluster mode yet: this request writes to one node only. In cluster mode, write with PQL queries, imports (import, import-roaring, legacy /import) and the schema routes';
