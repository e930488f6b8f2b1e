// Time quanta, PQL timestamps and time views (docs/API.md §3.6, §4.3). Times are UTC milliseconds
// since the epoch (plain numbers); every calendar step mirrors Go's time.AddDate normalisation,
// because the view names Pilosa picks for a range depend on it.
import { STANDARD_VIEW } from './names.js';

export type TimeUnit = 'Y' | 'M' | 'D' | 'H';

const QUANTA: ReadonlySet<string> = new Set(['Y', 'YM', 'YMD', 'YMDH', 'M', 'MD', 'MDH', 'D', 'DH', 'H']);

/** Pilosa's TimeQuantum.Valid: a listed quantum, or "" (no time views). */
export function isValidTimeQuantum(q: string): boolean {
  return q === '' || QUANTA.has(q);
}

export function quantumUnits(q: string): TimeUnit[] {
  return (['Y', 'M', 'D', 'H'] as const).filter((u) => q.includes(u));
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** JS Date's range: ±8.64e15 ms from 1970 (years −271821 to 275760); beyond it no Date exists. */
export const DATE_LIMIT_MS = 8.64e15;

/** Whether a time in ms is one a JS Date can hold (and so print, and turn into a view name). */
export const isDateTime = (ms: number): boolean => Number.isFinite(ms) && Math.abs(ms) <= DATE_LIMIT_MS;

/** Far enough from JS Date's ±8.64e15 limit that a year of arithmetic stays representable. */
const MAX_MS = 8.6e15;

const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/;

/** `2017-01-02T03:04` (UTC) → ms, or undefined when malformed or not a real date/time. */
export function parseTimestamp(text: string): number | undefined {
  const m = TIMESTAMP.exec(text);
  if (m === null) return undefined;
  const [y, mo, d, h, mi] = m.slice(1).map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo - 1) || h > 23 || mi > 59) return undefined;
  return utc(y, mo - 1, d, h, mi);
}

/** Unix seconds (from/to as integers) → ms, clamped to what a JS Date can hold. */
export function timeFromUnixSeconds(seconds: bigint): number {
  const ms = Number(seconds) * 1000;
  return Math.max(-MAX_MS, Math.min(MAX_MS, ms));
}

/** Go's zero time (0001-01-01T00:00Z): the implicit `from` of a range that only has `to`. */
export const ZERO_TIME = utc(1, 0, 1);

/** Go's t.AddDate(0, 0, days). */
export const addDays = (t: number, days: number): number => t + days * DAY;

/** The view for a timestamp in one unit, e.g. standard_20170102. */
export function viewByTimeUnit(t: number, unit: TimeUnit, prefix = STANDARD_VIEW): string {
  const f = fields(t);
  const y = f.y >= 0 && f.y <= 9999 ? String(f.y).padStart(4, '0') : String(f.y);
  const parts = [y, pad2(f.mo + 1), pad2(f.d), pad2(f.h)];
  const n = unit === 'Y' ? 1 : unit === 'M' ? 2 : unit === 'D' ? 3 : 4;
  return `${prefix}_${parts.slice(0, n).join('')}`;
}

/** The time views a Set with this timestamp writes: one per unit of the quantum. */
export function viewsForTimestamp(t: number, quantum: string, prefix = STANDARD_VIEW): string[] {
  return quantumUnits(quantum).map((u) => viewByTimeUnit(t, u, prefix));
}

export interface ViewPeriod {
  unit: TimeUnit;
  start: number;
  /** exclusive */
  end: number;
}

const VIEW_SUFFIX = /^(\d{4})(\d{2})?(\d{2})?(\d{2})?$/;

/** The period a time view covers (`standard_2017` → all of 2017), or undefined for other views. */
export function viewPeriod(name: string, prefix = STANDARD_VIEW): ViewPeriod | undefined {
  if (!name.startsWith(`${prefix}_`)) return undefined;
  const m = VIEW_SUFFIX.exec(name.slice(prefix.length + 1));
  if (m === null) return undefined;
  const y = Number(m[1]);
  const mo = m[2] === undefined ? 0 : Number(m[2]) - 1;
  const d = m[3] === undefined ? 1 : Number(m[3]);
  const h = m[4] === undefined ? 0 : Number(m[4]);
  const unit: TimeUnit = m[4] !== undefined ? 'H' : m[3] !== undefined ? 'D' : m[2] !== undefined ? 'M' : 'Y';
  const start = utc(y, mo, d, h);
  return { unit, start, end: periodEnd(start, unit) };
}

/** A span [from, to) of time, e.g. the period of an existing view. */
export interface TimeWindow {
  from: number;
  to: number;
}

/**
 * Pilosa's viewsByTimeRange (v1.4.0 time.go): the fewest views covering [start, end) for the
 * quantum, walking up from fine to coarse units, then down. With `within` (e.g. the periods of
 * the views that exist), only the views overlapping one of those spans are returned, and the
 * stretches between spans are skipped in O(log n) instead of walked one unit at a time (a
 * `to`-only range starts in year 1; an hourly quantum over years has tens of thousands of hours).
 */
export function viewsByTimeRange(
  start: number,
  end: number,
  quantum: string,
  within?: TimeWindow | readonly TimeWindow[],
  prefix = STANDARD_VIEW,
): string[] {
  const [hasY, hasM, hasD, hasH] = (['Y', 'M', 'D', 'H'] as const).map((u) => quantum.includes(u));
  const spans = within === undefined ? undefined : mergeSpans(Array.isArray(within) ? within : [within as TimeWindow]);
  const out: string[] = [];
  const emit = (t: number, unit: TimeUnit): void => {
    const from = floorTo(t, unit);
    if (spans === undefined || overlaps(spans, from, periodEnd(from, unit))) out.push(viewByTimeUnit(t, unit, prefix));
  };
  let t = start;
  if (hasH || hasD || hasM) {
    while (t < end) {
      const f = fields(t);
      if (hasH) {
        if (!nextDayGTE(t, end)) break;
        if (f.h !== 0) {
          emit(t, 'H');
          t += HOUR;
          continue;
        }
      }
      if (hasD) {
        if (!nextMonthGTE(t, end)) break;
        if (f.d !== 1) {
          emit(t, 'D');
          t = addDays(t, 1);
          continue;
        }
      }
      if (hasM) {
        if (!nextYearGTE(t, end)) break;
        if (f.mo !== 0) {
          emit(t, 'M');
          t = addMonth(t);
          continue;
        }
      }
      break;
    }
  }
  while (t < end) {
    let unit: TimeUnit;
    if (hasY && nextYearGTE(t, end)) unit = 'Y';
    else if (hasM && nextMonthGTE(t, end)) unit = 'M';
    else if (hasD && nextDayGTE(t, end)) unit = 'D';
    else if (hasH) unit = 'H';
    else break;
    if (spans !== undefined) {
      // Every later view starts at or after floor(t, unit) (t only grows, and units only get
      // finer): once no span ends after it, nothing more can overlap.
      const next = nextSpan(spans, floorTo(t, unit));
      if (next === undefined) break;
      const k = next.from > floorTo(t, unit) ? skippable(t, end, unit, next.from) : 0;
      if (k > 0) {
        t = advance(t, unit, k);
        continue;
      }
    }
    emit(t, unit);
    t = step(t, unit);
  }
  return out;
}

/** Sorted, disjoint spans with the same union. */
function mergeSpans(spans: readonly TimeWindow[]): TimeWindow[] {
  const sorted = spans.filter((s) => s.from < s.to).sort((a, b) => a.from - b.from);
  const out: TimeWindow[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && s.from <= last.to) last.to = Math.max(last.to, s.to);
    else out.push({ from: s.from, to: s.to });
  }
  return out;
}

/** The first span ending after t. */
function nextSpan(spans: readonly TimeWindow[], t: number): TimeWindow | undefined {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (spans[mid].to <= t) lo = mid + 1;
    else hi = mid;
  }
  return spans[lo];
}

function overlaps(spans: readonly TimeWindow[], from: number, to: number): boolean {
  const s = nextSpan(spans, from);
  return s !== undefined && s.from < to;
}

/**
 * How many steps of `unit` from t all emit views ending at or before `lo` (so they overlap
 * nothing) while `unit` stays the chosen branch. Branch conditions only turn from true to false
 * as t grows, and the coarser ones were already false at t, so checking the last step suffices.
 */
function skippable(t: number, end: number, unit: TimeUnit, lo: number): number {
  const f = fields(t);
  // Feb 29 (years) and day > 28 (months) normalise on the first step: take that one normally.
  if ((unit === 'Y' && f.mo === 1 && f.d === 29) || (unit === 'M' && f.d > 28)) return 0;
  const ok = (k: number): boolean => {
    if (k === 0) return true;
    const tk = advance(t, unit, k - 1);
    return Number.isFinite(tk) && periodEnd(floorTo(tk, unit), unit) <= lo && cond(tk, end, unit);
  };
  const minLen = unit === 'Y' ? 365 * DAY : unit === 'M' ? 28 * DAY : unit === 'D' ? DAY : HOUR;
  let lo2 = 0;
  let hi = Math.max(0, Math.ceil((lo - t) / minLen) + 2);
  while (lo2 < hi) {
    const mid = Math.ceil((lo2 + hi) / 2);
    if (ok(mid)) lo2 = mid;
    else hi = mid - 1;
  }
  return lo2;
}

function cond(t: number, end: number, unit: TimeUnit): boolean {
  return unit === 'Y'
    ? nextYearGTE(t, end)
    : unit === 'M'
      ? nextMonthGTE(t, end)
      : unit === 'D'
        ? nextDayGTE(t, end)
        : true;
}

function step(t: number, unit: TimeUnit): number {
  return unit === 'Y' ? addDate(t, 1, 0, 0) : unit === 'M' ? addMonth(t) : unit === 'D' ? addDays(t, 1) : t + HOUR;
}

/** k steps at once; valid when no step normalises the day of month (see skippable). */
function advance(t: number, unit: TimeUnit, k: number): number {
  return unit === 'Y'
    ? addDate(t, k, 0, 0)
    : unit === 'M'
      ? addDate(t, 0, k, 0)
      : unit === 'D'
        ? addDays(t, k)
        : t + k * HOUR;
}

function nextYearGTE(t: number, end: number): boolean {
  const next = addDate(t, 1, 0, 0);
  return fields(next).y === fields(end).y || end > next;
}

function nextMonthGTE(t: number, end: number): boolean {
  const next = addDate(t, 0, 1, 0);
  const a = fields(next);
  const b = fields(end);
  return (a.y === b.y && a.mo === b.mo) || end > next;
}

function nextDayGTE(t: number, end: number): boolean {
  const next = addDays(t, 1);
  const a = fields(next);
  const b = fields(end);
  return (a.y === b.y && a.mo === b.mo && a.d === b.d) || end > next;
}

/** Pilosa's addMonth: snap days 29–31 to the 1st (dropping minutes) before adding a month. */
function addMonth(t: number): number {
  const f = fields(t);
  const base = f.d > 28 ? utc(f.y, f.mo, 1, f.h, 0) : t;
  return addDate(base, 0, 1, 0);
}

/** Go's t.AddDate(years, months, days). */
function addDate(t: number, years: number, months: number, days: number): number {
  const f = fields(t);
  return utc(f.y + years, f.mo + months, f.d + days, f.h, f.mi);
}

function floorTo(t: number, unit: TimeUnit): number {
  const f = fields(t);
  if (unit === 'Y') return utc(f.y, 0, 1);
  if (unit === 'M') return utc(f.y, f.mo, 1);
  if (unit === 'D') return utc(f.y, f.mo, f.d);
  return utc(f.y, f.mo, f.d, f.h);
}

/** End of the period that starts at `start` (a floored time). */
function periodEnd(start: number, unit: TimeUnit): number {
  const f = fields(start);
  if (unit === 'Y') return utc(f.y + 1, 0, 1);
  if (unit === 'M') return utc(f.y, f.mo + 1, 1);
  if (unit === 'D') return utc(f.y, f.mo, f.d + 1);
  return start + HOUR;
}

interface Fields {
  y: number;
  /** 0-based */
  mo: number;
  d: number;
  h: number;
  mi: number;
}

function fields(t: number): Fields {
  const dt = new Date(t);
  return {
    y: dt.getUTCFullYear(),
    mo: dt.getUTCMonth(),
    d: dt.getUTCDate(),
    h: dt.getUTCHours(),
    mi: dt.getUTCMinutes(),
  };
}

/** UTC ms for a calendar time; out-of-range parts normalise like Go's time.Date. Years 0–99 stay as given. */
function utc(y: number, mo: number, d: number, h = 0, mi = 0): number {
  const dt = new Date(0);
  dt.setUTCFullYear(y, mo, d);
  dt.setUTCHours(h, mi, 0, 0);
  return dt.getTime();
}

function daysInMonth(y: number, mo: number): number {
  return new Date(utc(y, mo + 1, 0)).getUTCDate();
}

const pad2 = (n: number): string => String(n).padStart(2, '0');

/**
 * Whether `view` is a time view that a field of quantum `q` writes: a unit of the quantum, and
 * a real period (no month 13), spelt as the server spells it (viewByTimeUnit).
 */
export function isTimeViewOf(q: string, view: string, prefix = STANDARD_VIEW): boolean {
  const p = viewPeriod(view, prefix);
  return p !== undefined && quantumUnits(q).includes(p.unit) && viewByTimeUnit(p.start, p.unit, prefix) === view;
}
