import { readFileSync } from 'node:fs';
import { repoPath } from './util/proto-path.js';

// The server's own version from package.json, as /version reports it: v<major>.<minor>.<patch>.
export const VERSION = `v${(JSON.parse(readFileSync(repoPath(import.meta.url, 'package.json'), 'utf8')) as { version: string }).version}`;
