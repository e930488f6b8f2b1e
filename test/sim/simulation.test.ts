// The deterministic simulation (sim/, `npm run sim`) in CI: a bounded number of seeds of the real
// engine over the in-memory disk pass every check; the same seeds with the disk losing an
// acknowledged write fail (the checks can fail); one seed's trace is the same byte for byte in
// two processes. Thousands of seeds: bench/README.md, "Deterministic simulation".
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSeed } from '../../sim/run-seed.js';

const repo = resolve(import.meta.dirname, '../..');
/** Seeds CI runs (a few seconds each at rest); `npm run sim -- --seeds 200` is the acceptance run. */
const CI_SEEDS = 8;

function sim(args: string[]): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'sim/main.ts', ...args], {
    cwd: repo,
    encoding: 'utf8',
    timeout: 170_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const lastLine = (out: string): string => out.trim().split('\n').at(-1) ?? '';

describe('deterministic simulation', () => {
  it(`passes ${CI_SEEDS} seeds: acknowledged writes survive crashes, no request is partly applied, live = replayed`, async () => {
    const failures: string[] = [];
    let acked = 0;
    let crashes = 0;
    for (let seed = 1; seed <= CI_SEEDS; seed++) {
      const r = await runSeed({ seed, durationMs: 1500 });
      if (r.failure !== undefined) failures.push(`seed ${seed}: ${r.failure}`);
      acked += Number(/acked (\d+)/.exec(r.summary)?.[1] ?? 0);
      crashes += Number(/crashes (\d+)/.exec(r.summary)?.[1] ?? 0);
    }
    expect(failures).toEqual([]);
    // The runs did something worth checking.
    expect(acked).toBeGreaterThan(CI_SEEDS * 50);
    expect(crashes).toBeGreaterThan(CI_SEEDS);
  }, 180_000);

  it('fails with --break acked-loss, naming the failing seeds on its last line', () => {
    const r = sim(['--seeds', '3', '--break', 'acked-loss', '--duration-ms', '1500']);
    expect(r.status, r.out).toBe(1);
    expect(lastLine(r.out)).toMatch(/^3 seeds, [1-3] failures?: seeds? [\d, ]+$/);
    expect(r.out).toMatch(/is missing|is lost/);
  }, 180_000);

  it('replays one seed identically, byte for byte, in two processes', () => {
    const args = ['--seeds', '1', '--first-seed', '42', '--trace', '--duration-ms', '1500'];
    const a = sim(args);
    const b = sim(args);
    expect(a.status, a.out).toBe(0);
    expect(lastLine(a.out)).toBe('1 seeds, 0 failures');
    expect(a.out.split('\n').length).toBeGreaterThan(50);
    expect(b.out).toBe(a.out);
    // And the trace depends on the seed.
    const other = sim(['--seeds', '1', '--first-seed', '43', '--trace', '--duration-ms', '1500']);
    expect(other.out).not.toBe(a.out);
  }, 180_000);
});
