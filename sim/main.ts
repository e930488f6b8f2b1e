// npm run sim -- --seeds N [--first-seed S] [--trace] [--break acked-loss]
// Runs seeds S..S+N-1 of the deterministic simulation (sim/run-seed.ts) one after another and
// prints one line per seed (with --trace, the seed's whole trace before it); the last line is
// `N seeds, F failures`, naming the failing seeds. Exits 1 when any seed failed.
import { runSeed } from './run-seed.js';

interface Args {
  seeds: number;
  firstSeed: number;
  trace: boolean;
  breakAckedLoss: boolean;
  durationMs: number | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const a: Args = { seeds: 1, firstSeed: 1, trace: false, breakAckedLoss: false, durationMs: undefined };
  const num = (i: number, name: string): number => {
    const v = Number(argv[i + 1]);
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${name} needs a whole number, got ${argv[i + 1]}`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--seeds') a.seeds = num(i++, arg);
    else if (arg === '--first-seed') a.firstSeed = num(i++, arg);
    else if (arg === '--duration-ms') a.durationMs = num(i++, arg);
    else if (arg === '--trace') a.trace = true;
    else if (arg === '--break' && argv[i + 1] === 'acked-loss') {
      a.breakAckedLoss = true;
      i++;
    } else
      throw new Error(`unknown argument ${arg} (usage: --seeds N [--first-seed S] [--trace] [--break acked-loss])`);
  }
  return a;
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const failed: number[] = [];
  for (let seed = args.firstSeed; seed < args.firstSeed + args.seeds; seed++) {
    const r = await runSeed({ seed, breakAckedLoss: args.breakAckedLoss, durationMs: args.durationMs });
    if (args.trace) for (const line of r.trace) process.stdout.write(`${line}\n`);
    if (r.failure !== undefined) failed.push(seed);
    process.stdout.write(`seed ${seed}: ${r.failure === undefined ? 'ok' : `FAILED ${r.failure}`} (${r.summary})\n`);
  }
  const named = failed.length > 0 ? `: seed${failed.length > 1 ? 's' : ''} ${failed.join(', ')}` : '';
  process.stdout.write(`${args.seeds} seeds, ${failed.length} failures${named}\n`);
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`sim: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
