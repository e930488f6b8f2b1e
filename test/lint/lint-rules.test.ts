// `npm run lint` can fail: the dependency rules (.dependency-cruiser.cjs) and the documentation
// path check (scripts/check-doc-paths.mjs) run on a temporary copy of the tree, once clean and
// once with an upward import, a cycle, an import of events/apply.ts or of an engine internal from
// outside the engine, an import between http/ and kafka/, and a broken documentation path.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/temp.js';

const repo = resolve(import.meta.dirname, '../..');
let dir = '';

function run(args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

const depcruise = (): { status: number | null; out: string } =>
  run([
    join(repo, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
    'src',
    'migrations',
    '--config',
    '.dependency-cruiser.cjs',
  ]);
const docPaths = (): { status: number | null; out: string } => run([join(dir, 'scripts/check-doc-paths.mjs'), dir]);
const clockEnv = (): { status: number | null; out: string } => run([join(dir, 'scripts/check-clock-env.mjs'), dir]);

beforeAll(() => {
  dir = tempDir('bitledger-lint-');
  for (const p of [
    'src',
    'migrations',
    'docs',
    'scripts',
    'README.md',
    'tsconfig.json',
    '.dependency-cruiser.cjs',
    'package.json',
  ]) {
    cpSync(join(repo, p), join(dir, p), { recursive: true });
  }
  // Paths the docs name outside the copied folders.
  for (const p of ['test', 'bench', 'ops', 'proto', 'sim', '.ci'])
    cpSync(join(repo, p), join(dir, p), { recursive: true });
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
});
afterAll(() => removeDir(dir));

describe('npm run lint', () => {
  it('passes on the tree as it is', () => {
    const deps = depcruise();
    expect(deps.status, deps.out).toBe(0);
    const docs = docPaths();
    expect(docs.status, docs.out).toBe(0);
    const clock = clockEnv();
    expect(clock.status, clock.out).toBe(0);
  }, 180_000);

  it('fails on an upward import, a cycle, apply() or an engine internal outside the engine, http/ ↔ kafka/, and a missing documented path', () => {
    // domain/ (bottom) importing engine/ (upper layer).
    appendFileSync(
      join(dir, 'src/domain/shard.ts'),
      "\nexport type { Engine as UpwardForTest } from '../engine/engine.js';\n",
    );
    // A cycle inside one directory (allowed by the layers, refused as a cycle).
    mkdirSync(join(dir, 'src/util/cycle'), { recursive: true });
    writeFileSync(
      join(dir, 'src/util/cycle/a.ts'),
      "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
    );
    writeFileSync(
      join(dir, 'src/util/cycle/b.ts'),
      "import { a } from './a.js';\nexport const b = (): number => a() - 1;\n",
    );
    // The only mutator called from a service.
    appendFileSync(
      join(dir, 'src/service/export-service.ts'),
      "\nexport { apply as applyForTest } from '../events/apply.js';\n",
    );
    // An engine internal reached from outside the engine.
    appendFileSync(
      join(dir, 'src/service/key-service.ts'),
      "\nexport type { CommitQueue as InternalForTest } from '../engine/commit-queue.js';\n",
    );
    // Sibling adapters.
    appendFileSync(
      join(dir, 'src/kafka/client.ts'),
      "\nexport type { HttpContext as SiblingForTest } from '../http/context.js';\n",
    );
    const deps = depcruise();
    expect(deps.status, deps.out).not.toBe(0);
    for (const rule of [
      'layer-domain',
      'no-circular',
      'apply-only-from-engine',
      'engine-internals-private',
      'layer-kafka',
    ])
      expect(deps.out).toContain(rule);

    appendFileSync(join(dir, 'docs/ARCHITECTURE.md'), '\nSee `src/engine/no-such-file.ts`.\n');
    const docs = docPaths();
    expect(docs.status).toBe(1);
    expect(docs.out).toContain('src/engine/no-such-file.ts');
  }, 180_000);

  it('fails on a clock or environment read outside the Clock port, and on an async scope near the write path', () => {
    const before = clockEnv();
    expect(before.status, before.out).toBe(0);
    // Reads inside comments and strings are not code: still clean.
    appendFileSync(
      join(dir, 'src/state/digest.ts'),
      "\n// Date.now() in a comment\nexport const TEXT_FOR_TEST = 'process.env';\n",
    );
    expect(clockEnv().status).toBe(0);
    const cases: [string, string, string][] = [
      ['src/engine/retention.ts', 'export const a = (): number => Date.now();', 'Date.now()'],
      ['src/engine/commit-queue.ts', 'export const b = (): Date => new Date();', 'new Date() without arguments'],
      ['src/executor/budget.ts', 'export const c = (): number => performance.now();', 'performance.now()'],
      ['src/engine/engine.ts', 'export const d = (): string | undefined => process.env.HOME;', 'process.env'],
      ['src/http/app.ts', 'export const e = (): string => Date();', 'Date() called as a function'],
      ['src/service/schema-service.ts', "export { AsyncLocalStorage as S } from 'node:async_hooks';", 'async scope'],
      [
        'src/kafka/request-writes.ts',
        "export type { Engine as E } from '../engine/engine.js';",
        'imports the write path',
      ],
    ];
    for (const [file, line] of cases) appendFileSync(join(dir, file), `\n${line}\n`);
    // Allowed where time and settings are read.
    appendFileSync(join(dir, 'src/config/settings.ts'), '\nexport const nowForTest = (): number => Date.now();\n');
    const after = clockEnv();
    expect(after.status).toBe(1);
    for (const [file] of cases) expect(after.out).toContain(file);
    for (const [, , what] of cases) expect(after.out).toContain(what);
    expect(after.out).not.toContain('src/config/settings.ts');
    expect(after.out).not.toContain('src/state/digest.ts');
  });
});
