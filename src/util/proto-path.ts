import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/**
 * Absolute path of a repository file (proto/…, package.json), found by walking up from the
 * calling module, so it works both from src/ under tsx and from dist/src/ after tsc.
 */
export function repoPath(moduleUrl: string, rel: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, rel);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`${rel} not found above ${moduleUrl}`);
}

/** A file under the repository's proto/ folder. */
export const protoPath = (moduleUrl: string, rel: string): string => repoPath(moduleUrl, join('proto', rel));
