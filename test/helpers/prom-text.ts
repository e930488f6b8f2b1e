// A strict reader of the Prometheus text exposition format (version 0.0.4), enough to check that
// /metrics parses: every sample belongs to a family declared by # TYPE, names and label sets are
// well formed, and every value is a number.
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePromText(text: string): { types: Map<string, string>; samples: PromSample[] } {
  const types = new Map<string, string>();
  const samples: PromSample[] = [];
  text.split('\n').forEach((line, i) => {
    const where = `line ${i + 1}: ${line}`;
    if (line.trim() === '') return;
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      if (!NAME.test(name) || !TYPES.has(type)) throw new Error(`bad TYPE at ${where}`);
      if (types.has(name)) throw new Error(`second TYPE for ${name} at ${where}`);
      types.set(name, type);
      return;
    }
    if (line.startsWith('#')) return;
    const m = SAMPLE.exec(line);
    if (m === null) throw new Error(`bad sample at ${where}`);
    const labels: Record<string, string> = {};
    if (m[3] !== undefined && m[3] !== '') {
      LABEL.lastIndex = 0;
      while (LABEL.lastIndex < m[3].length) {
        const l = LABEL.exec(m[3]);
        if (l === null) throw new Error(`bad labels at ${where}`);
        labels[l[1]] = l[2];
      }
    }
    const value = m[4] === '+Inf' ? Infinity : m[4] === '-Inf' ? -Infinity : Number(m[4]);
    // Prometheus reads values with Go's ParseFloat, where NaN is case-insensitive: prom-client
    // writes "Nan" (the event-loop lag gauges before their first sample, a race with the scrape).
    if (Number.isNaN(value) && !/^nan$/i.test(m[4])) throw new Error(`bad value at ${where}`);
    const family = [...types.keys()].find(
      (t) => m[1] === t || (/_(bucket|sum|count|total|created)$/.test(m[1]) && m[1].startsWith(t + '_')),
    );
    if (family === undefined) throw new Error(`sample without a TYPE at ${where}`);
    samples.push({ name: m[1], labels, value });
  });
  return { types, samples };
}

/** The sum of a metric's samples whose labels include `match`. */
export function promValue(samples: PromSample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0);
}
