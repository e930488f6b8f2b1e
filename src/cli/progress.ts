// Progress of a long operator command: a bar on a terminal, a line every few seconds otherwise
// (logs, CI), so a restore of millions of events is never silent.
import { Presets, SingleBar } from 'cli-progress';

export interface Progress {
  update(done: number): void;
  stop(): void;
}

const LINE_EVERY_MS = 2000;

export function progress(
  label: string,
  total: number,
  unit: string,
  out: (line: string) => void,
  tty = process.stderr.isTTY === true,
): Progress {
  if (tty) {
    const bar = new SingleBar(
      { format: `${label} [{bar}] {percentage}% {value}/{total} ${unit} eta {eta}s`, stream: process.stderr },
      Presets.shades_classic,
    );
    bar.start(Math.max(total, 1), 0);
    return { update: (done) => bar.update(Math.min(done, Math.max(total, 1))), stop: () => bar.stop() };
  }
  const started = Date.now();
  let lastLine = started;
  return {
    update(done) {
      const now = Date.now();
      if (now - lastLine < LINE_EVERY_MS) return;
      lastLine = now;
      const rate = Math.round((done / Math.max(now - started, 1)) * 1000);
      out(`${label}: ${done}/${total} ${unit} (${rate} ${unit}/s)`);
    },
    stop() {},
  };
}
