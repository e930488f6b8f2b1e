// `npm run lint:clock`: two rules that make a run of the engine depend on its inputs alone, so the
// simulator (sim/) can replay any seed byte for byte.
// 1. Outside src/config/, src/cli/ and src/util/clock.ts (the Clock port), nothing in src/ reads
//    the wall clock (Date.now(), new Date() or Date() without arguments, performance.now(),
//    process.hrtime) or the environment (process.env): time comes from a Clock, settings and
//    test hooks from options.
// 2. No AsyncLocalStorage steers writes: what a commit does is given by its arguments
//    (Engine.commit), never by an ambient scope. async_hooks is allowed only in the files listed
//    below, which observe writes, and such a file may not reach the engine or the services.
// Comments and string literals are blanked before matching. Exits 1 and lists every finding.
// Usage: node scripts/check-clock-env.mjs [root]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = process.argv[2] ?? process.cwd();

const CLOCK_ENV_EXEMPT = [/^src\/config\//, /^src\/cli\//, /^src\/util\/clock\.ts$/];

/** Files that may use async_hooks, and why: each observes, none steers. */
const ASYNC_SCOPE_ALLOWED = new Map([
  ['src/kafka/request-writes.ts', 'notes which sequences a request staged (the mirror ack waits for them)'],
]);

const CLOCK_ENV = [
  [/\bDate\s*\.\s*now\s*\(/, 'Date.now()'],
  [/\bnew\s+Date\s*(\(\s*\)|(?!\s*\())/, 'new Date() without arguments'],
  [/(?<![\w.$]|new\s)Date\s*\(/, 'Date() called as a function'],
  [/\bperformance\s*\.\s*now\s*\(/, 'performance.now()'],
  [/\bprocess\s*\.\s*hrtime\b/, 'process.hrtime'],
  [/\bprocess\s*\.\s*env\b/, 'process.env'],
  [/\bprocess\s*\[\s*['"`]env/, 'process.env'],
];
const ASYNC_SCOPE = /\bAsyncLocalStorage\b|\basync_hooks\b|\bAsyncResource\b|\bexecutionAsyncResource\b/;
/** What an async scope file may not import: the write path. */
const WRITE_PATH_IMPORT = /from\s+['"][./]*(?:engine|service|state|cluster)\//;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

/** The source with comments and the contents of string literals replaced by spaces (lines kept). */
export function blank(src) {
  let out = '';
  let i = 0;
  const keepNewlines = (s) => s.replace(/[^\n]/g, ' ');
  while (i < src.length) {
    const c = src[i];
    const d = src[i + 1];
    if (c === '/' && d === '/') {
      const end = src.indexOf('\n', i);
      const stop = end === -1 ? src.length : end;
      out += keepNewlines(src.slice(i, stop));
      i = stop;
    } else if (c === '/' && d === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end === -1 ? src.length : end + 2;
      out += keepNewlines(src.slice(i, stop));
      i = stop;
    } else if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < src.length && src[j] !== c) j += src[j] === '\\' ? 2 : 1;
      // Template substitutions are code, but `${…}` holding a clock read is rare enough to accept
      // the blind spot over parsing TypeScript here.
      out += c + keepNewlines(src.slice(i + 1, j)) + c;
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const problems = [];
for (const file of walk(join(root, 'src'))) {
  const rel = relative(root, file).split('\\').join('/');
  const raw = readFileSync(file, 'utf8');
  const code = blank(raw);
  const lines = code.split('\n');
  const clockExempt = CLOCK_ENV_EXEMPT.some((re) => re.test(rel));
  lines.forEach((line, n) => {
    if (!clockExempt)
      for (const [re, what] of CLOCK_ENV)
        if (re.test(line)) problems.push(`${rel}:${n + 1}: ${what} outside the Clock port, src/config/ and src/cli/`);
    if (ASYNC_SCOPE.test(line) && !ASYNC_SCOPE_ALLOWED.has(rel))
      problems.push(`${rel}:${n + 1}: an async scope (AsyncLocalStorage, async_hooks) outside the observers allowed`);
  });
  if (ASYNC_SCOPE_ALLOWED.has(rel)) {
    const imports = raw.split('\n').filter((l) => WRITE_PATH_IMPORT.test(l));
    for (const l of imports)
      problems.push(`${rel}: an async scope file imports the write path (${l.trim()}): a scope must not steer commits`);
  }
}

if (problems.length > 0) {
  console.error(`check-clock-env: ${problems.length} finding(s)\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('check-clock-env: no clock or environment reads outside the Clock port; no async scope steers writes');
