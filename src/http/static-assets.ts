// The web console's files (web/console), read once at startup into memory. Requests are answered
// only from this table, keyed by the relative path of each file found, so no request path ever
// reaches the file system: "..", encoded slashes or absolute paths simply miss.
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { extname, join } from 'node:path';

export interface StaticAsset {
  body: Buffer;
  contentType: string;
  etag: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
};

/** Every servable file under `dir` by relative POSIX path; files of unknown types and dot files are left out. */
export function loadStaticAssets(dir: string): Map<string, StaticAsset> {
  const assets = new Map<string, StaticAsset>();
  const walk = (abs: string, rel: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const relPath = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) walk(join(abs, entry.name), relPath);
      const contentType = CONTENT_TYPES[extname(entry.name)];
      if (!entry.isFile() || contentType === undefined) continue;
      const body = readFileSync(join(abs, entry.name));
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
      assets.set(relPath, { body, contentType, etag });
    }
  };
  walk(dir, '');
  return assets;
}

/** True when an If-None-Match header names `etag` (or `*`): the client's copy is current. */
export function isNotModified(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}
