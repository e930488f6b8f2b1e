import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/**
 * Absolute path of a file under the repository's proto/ folder, found from the calling module's
 * URL so it works both from src/ under tsx and from dist/src/ after tsc.
 */
export function protoPath(moduleUrl: string, rel: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'proto', rel);
    if (existsSync(candidate)) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`proto file ${rel} not found above ${moduleUrl}`);
}
