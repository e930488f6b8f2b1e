// A prom-client Histogram whose observations are counted by hand, for the per-request figures.
// prom-client's observe validates the labels, hashes them into a string and looks up an object
// keyed by that string on every call: a few µs of the request path. Here the caller names the
// label set with a key it already has (a short string), and a bucket is one slot of a typed array.
// Prometheus scrapes the same text as before: the registry reads this histogram through the same
// methods it reads prom-client's own (getForPromString, get), and the values below are built in
// prom-client's order and shapes (test/unit/tallied-histogram.test.ts compares the two).
import { Histogram, type LabelValues, type Registry } from 'prom-client';

/** One label set's figures: non-cumulative bucket counts (prom-client's `findBound`), sum, count. */
class Tally<T extends string> {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(
    readonly labels: LabelValues<T>,
    buckets: number,
  ) {
    this.counts = new Float64Array(buckets);
  }
}

interface ExportedValue<T extends string> {
  labels: LabelValues<T | 'le'>;
  sharedLabels: LabelValues<T>;
  value: number;
  metricName: string;
  exemplar?: null;
}

export interface TalliedHistogramConfig<T extends string> {
  name: string;
  help: string;
  labelNames: readonly T[];
  buckets: readonly number[];
  registers: Registry[];
}

export class TalliedHistogram<T extends string> extends Histogram<T> {
  private readonly bounds: readonly number[];
  private readonly metricName: string;
  private readonly metricHelp: string;
  /** Label sets in the order first observed, as prom-client lists them. */
  private tallies = new Map<string, Tally<T>>();

  constructor(config: TalliedHistogramConfig<T>) {
    super({ ...config, labelNames: [...config.labelNames], buckets: [...config.buckets] });
    this.bounds = [...config.buckets];
    this.metricName = config.name;
    this.metricHelp = config.help;
  }

  /**
   * Counts one value for the label set `key` names, if that set was seen before; false when not
   * (then call `first`). The caller keeps key -> labels one to one.
   */
  tally(key: string, value: number): boolean {
    const t = this.tallies.get(key);
    if (t === undefined) return false;
    this.add(t, value);
    return true;
  }

  /** Counts the first value of a label set. */
  first(key: string, labels: LabelValues<T>, value: number): void {
    const t = new Tally(labels, this.bounds.length);
    this.tallies.set(key, t);
    this.add(t, value);
  }

  private add(t: Tally<T>, value: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        t.counts[i]++;
        break;
      }
    }
    t.sum += value;
    t.count += 1;
  }

  override reset(): void {
    super.reset();
    this.tallies = new Map();
  }

  /** What the registry formats into the text exposition (prom-client's Histogram shape). */
  getForPromString(): Promise<{
    name: string;
    help: string;
    type: 'histogram';
    values: ExportedValue<T>[];
    aggregator: 'sum';
  }> {
    const bucket = `${this.metricName}_bucket`;
    const values: ExportedValue<T>[] = [];
    for (const t of this.tallies.values()) {
      let acc = 0;
      this.bounds.forEach((le, i) => {
        acc += t.counts[i];
        values.push(exported({ le } as LabelValues<T | 'le'>, acc, bucket, t.labels, null));
      });
      values.push(exported({ le: '+Inf' } as LabelValues<T | 'le'>, t.count, bucket, t.labels, null));
      values.push(exported({}, t.sum, `${this.metricName}_sum`, t.labels));
      values.push(exported({}, t.count, `${this.metricName}_count`, t.labels));
    }
    return Promise.resolve({
      name: this.metricName,
      help: this.metricHelp,
      type: 'histogram',
      values,
      aggregator: 'sum',
    });
  }

  override async get(): ReturnType<Histogram<T>['get']> {
    const data = await this.getForPromString();
    // prom-client's own get() has no `collect` in its answer either, whatever its typings say.
    return {
      ...data,
      values: data.values.map(({ labels, sharedLabels, value, metricName, exemplar }) => ({
        value,
        metricName,
        ...(exemplar === undefined ? {} : { exemplar }),
        labels: { ...labels, ...sharedLabels },
      })),
    } as unknown as Awaited<ReturnType<Histogram<T>['get']>>;
  }
}

function exported<T extends string>(
  labels: LabelValues<T | 'le'>,
  value: number,
  metricName: string,
  sharedLabels: LabelValues<T>,
  exemplar?: null,
): ExportedValue<T> {
  return exemplar === undefined
    ? { labels, sharedLabels, value, metricName }
    : { labels, sharedLabels, value, metricName, exemplar };
}
