// The promise of what `run` answers: a value, a promise, or a throw (a rejection). The "now"
// variants of the read path (QueryService.executeNow, workerReadNow, executePreparedNow) answer a
// small read's value itself so the HTTP lean path skips the promise hops; their promise-only
// callers go through this.
export function promised<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    const r = run();
    return r instanceof Promise ? r : Promise.resolve(r);
  } catch (e) {
    return Promise.reject(e);
  }
}
