// --legacy-release: answer as one 0.x release instead of accepting every 0.x spelling. The
// per-release differences (README table "Legacy releases"): the name of the row argument of
// Bitmap/SetBit/ClearBit/Range/SetRowAttrs, which calls and endpoints exist, and the answer shapes.
import { badRequest } from '../../domain/errors.js';
import type { Call, Query } from '../../pql/ast.js';

export type LegacyRelease = '' | '0.5' | '0.6' | '0.7' | '0.8' | '0.9' | '0.10';
export const LEGACY_RELEASES: readonly LegacyRelease[] = ['0.5', '0.6', '0.7', '0.8', '0.9', '0.10'];

export function isLegacyRelease(v: string): v is LegacyRelease {
  return v === '' || (LEGACY_RELEASES as readonly string[]).includes(v);
}

/** Release as a comparable number: 0.5 → 5, 0.10 → 10. */
function minor(r: LegacyRelease): number {
  return Number(r.slice(2));
}

/** The row argument's name in the release. */
export function rowArgument(r: LegacyRelease): string {
  if (r === '0.5') return 'id';
  return minor(r) <= 8 ? 'rowID' : 'row';
}

const ROW_CALLS = new Set(['Bitmap', 'SetBit', 'ClearBit', 'Range', 'SetRowAttrs']);
const ROW_SPELLINGS = ['id', 'rowID', 'row'];

/** Endpoint families a release lacks (its documentation shows none of them). */
export function releaseHas(
  r: LegacyRelease,
  what: 'input-definitions' | 'time-quantum' | 'hosts' | 'recalculate-caches' | 'min-max',
): boolean {
  if (r === '') return true;
  const m = minor(r);
  switch (what) {
    case 'input-definitions':
    case 'time-quantum':
      return m <= 8;
    case 'hosts':
      return m <= 9;
    case 'recalculate-caches':
      return m >= 8;
    case 'min-max':
      return m >= 9;
  }
}

/** Refuses what the release would not have understood, naming the release's own spelling. */
export function checkLegacyRelease(r: LegacyRelease, query: Query): void {
  if (r === '') return;
  const want = rowArgument(r);
  const visit = (call: Call): void => {
    if (ROW_CALLS.has(call.name)) {
      for (const s of ROW_SPELLINGS) {
        if (s !== want && call.args.has(s))
          throw badRequest(
            `executing: ${call.name}(): the row argument is named ${want} in release ${r} (--legacy-release), not ${s}`,
          );
      }
    }
    if ((call.name === 'Min' || call.name === 'Max') && !releaseHas(r, 'min-max'))
      throw badRequest(`executing: ${call.name}() does not exist in release ${r} (--legacy-release); it came with 0.9`);
    call.children.forEach(visit);
    for (const v of call.args.values()) if (v.kind === 'call') visit(v.call);
  };
  query.calls.forEach(visit);
}
