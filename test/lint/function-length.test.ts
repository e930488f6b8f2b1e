// `npm run lint:functions` (scripts/check-function-length.mjs) can fail: it runs on a temporary
// copy of src/ and the allowlist, once as the tree is, then with a long function of each form
// (declaration, arrow assigned to a const, class method), and with an allowlist entry that no
// longer names a long function.
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, tempDir } from '../helpers/temp.js';

const repo = resolve(import.meta.dirname, '../..');
let dir = '';

function check(): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [join(dir, 'scripts/check-function-length.mjs'), dir], {
    cwd: repo,
    encoding: 'utf8',
    timeout: 120_000,
  });
  return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
}

/** A function body of `n` statement lines. */
const body = (n: number): string => Array.from({ length: n }, (_, i) => `  x += ${i};`).join('\n');

beforeAll(() => {
  dir = tempDir('bitledger-fnlen-');
  cpSync(join(repo, 'src'), join(dir, 'src'), { recursive: true });
  cpSync(join(repo, 'scripts'), join(dir, 'scripts'), { recursive: true });
  symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
});
afterAll(() => removeDir(dir));

describe('npm run lint:functions', () => {
  it('passes on the tree as it is', () => {
    const r = check();
    expect(r.status, r.out).toBe(0);
  }, 120_000);

  it('accepts a function of exactly 70 lines', () => {
    // 68 statements + the signature line + the closing brace = 70 lines.
    writeFileSync(
      join(dir, 'src/util/seventy.ts'),
      `export function seventy(x: number): number {\n${body(67)}\n  return x;\n}\n`,
    );
    const r = check();
    expect(r.status, r.out).toBe(0);
  }, 120_000);

  it('fails on a long declaration, arrow and method, naming each with its length', () => {
    appendFileSync(
      join(dir, 'src/util/assert.ts'),
      `\nexport function longDeclared(x: number): number {\n${body(70)}\n  return x;\n}\n` +
        `export const longArrow = (x: number): number => {\n${body(70)}\n  return x;\n};\n` +
        `export class LongForTest {\n  longMethod(x: number): number {\n${body(70)}\n    return x;\n  }\n}\n`,
    );
    const r = check();
    expect(r.status).toBe(1);
    expect(r.out).toMatch(/src\/util\/assert\.ts:\d+ longDeclared is 73 lines/);
    expect(r.out).toMatch(/src\/util\/assert\.ts:\d+ longArrow is 73 lines/);
    expect(r.out).toMatch(/src\/util\/assert\.ts:\d+ longMethod is 73 lines/);
  }, 120_000);

  it('fails on an allowlist entry that no longer names a long function', () => {
    const path = join(dir, 'scripts/function-length-allowlist.json');
    const list = JSON.parse(readFileSync(path, 'utf8')) as string[];
    writeFileSync(path, JSON.stringify([...list, 'src/util/assert.ts:assert']));
    const r = check();
    expect(r.status).toBe(1);
    expect(r.out).toContain('src/util/assert.ts:assert is in the allowlist but is not over 70 lines');
  }, 120_000);
});
