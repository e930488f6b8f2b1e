// Starting a worker thread from this package's own sources: a build runs the .js beside the
// module; sources (tests, `--import tsx`) load the .ts through tsx's loader, which a worker does
// not inherit.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** tsx's ESM API (the .mjs beside the .cjs that require resolves). */
const TSX_API = pathToFileURL(
  createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs'),
).href;

/** The URL of module `name` (no extension) beside `base` (an import.meta.url), .ts when run from sources. */
export function siblingModule(name: string, base: string): URL {
  return new URL(`./${name}.${base.endsWith('.ts') ? 'ts' : 'js'}`, base);
}

export function startWorker(url: URL, options: WorkerOptions = {}): Worker {
  return url.pathname.endsWith('.ts')
    ? new Worker(
        `import(${JSON.stringify(TSX_API)}).then((tsx) => (tsx.register(), import(${JSON.stringify(url.href)})));`,
        { eval: true, ...options },
      )
    : new Worker(url, options);
}
