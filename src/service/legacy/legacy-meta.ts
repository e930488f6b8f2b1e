// Legacy (0.x frame API) metadata kept per index in Index.legacyMeta, written through the
// LegacyMetaSet event so it is as durable as the bits: frame options the current field model has
// no place for (rowLabel, inverseEnabled, the frame's int fields), the index's default time
// quantum and column label, and input definitions. Values are JSON strings under these keys.
import type { CacheType } from '../../domain/types.js';
import type { Event } from '../../events/types.js';
import { DEFAULT_COLUMN_LABEL, DEFAULT_ROW_LABEL, type LegacyNames } from '../../pql/legacy.js';
import type { ReadonlyIndex } from '../../state/readonly.js';

const FRAME = 'frame:';
const INPUT = 'input:';
const TIME_QUANTUM = 'index:timeQuantum';
const COLUMN_LABEL = 'index:columnLabel';

/** What a legacy frame remembers beyond the field it maps to. */
export interface FrameMeta {
  rowLabel: string;
  /** Set/Clear keep the inverse view (INVERSE_VIEW); Bitmap(frame, columnID) reads it. */
  inverseEnabled: boolean;
  cacheType: CacheType;
  cacheSize: number;
  timeQuantum: string;
  /** Deprecated in 0.9+; kept only to echo it back. */
  rangeEnabled: boolean;
  /** Names (legacy, unprefixed) of the frame's int fields; see intFieldName. */
  fields: string[];
}

/**
 * The current field that holds int field `name` of frame `frame`: `<frame>_<name>`. Frames of
 * different names may then both have an int field `x`, and the pair stays visible in /schema.
 */
export function intFieldName(frame: string, name: string): string {
  return `${frame}_${name}`;
}

/** Whether writes to the frame also keep its inverse view. */
export function inverseEnabled(index: ReadonlyIndex, frame: string): boolean {
  return index.legacyMeta.has(FRAME + frame) && frameMeta(index, frame)?.inverseEnabled === true;
}

export function frameMeta(index: ReadonlyIndex, frame: string): FrameMeta | undefined {
  const raw = index.legacyMeta.get(FRAME + frame);
  return raw === undefined ? undefined : (JSON.parse(raw) as FrameMeta);
}

/** Frame meta, or what a frame created through the current API (a plain field) amounts to. */
export function frameMetaOrDefault(index: ReadonlyIndex, frame: string): FrameMeta {
  const stored = frameMeta(index, frame);
  if (stored !== undefined) return stored;
  const o = index.field(frame)?.options;
  return {
    rowLabel: DEFAULT_ROW_LABEL,
    inverseEnabled: false,
    cacheType: o?.cacheType ?? 'ranked',
    cacheSize: o?.cacheSize ?? 0,
    timeQuantum: o?.timeQuantum ?? '',
    rangeEnabled: false,
    fields: [],
  };
}

export function indexTimeQuantum(index: ReadonlyIndex): string {
  return index.legacyMeta.get(TIME_QUANTUM) ?? '';
}

export function columnLabel(index: ReadonlyIndex): string {
  return index.legacyMeta.get(COLUMN_LABEL) ?? DEFAULT_COLUMN_LABEL;
}

export function inputDefinitionJson(index: ReadonlyIndex, name: string): string | undefined {
  return index.legacyMeta.get(INPUT + name);
}

export const setFrameMeta = (index: string, frame: string, meta: FrameMeta | null): Event =>
  metaEvent(index, FRAME + frame, meta === null ? null : JSON.stringify(meta));
export const setIndexTimeQuantum = (index: string, q: string): Event => metaEvent(index, TIME_QUANTUM, q);
export const setColumnLabel = (index: string, label: string): Event => metaEvent(index, COLUMN_LABEL, label);
export const setInputDefinition = (index: string, name: string, json: string | null): Event =>
  metaEvent(index, INPUT + name, json);

function metaEvent(index: string, key: string, value: string | null): Event {
  return { type: 'LegacyMetaSet', index, key, value };
}

/**
 * The current int field for a legacy frame's int field: the frame's own `<frame>_<name>` when it
 * exists; else a plain int field `name` (a schema made through the current API queried by an old
 * client); else `<frame>_<name>`, which the executor reports as not found.
 */
export function resolveIntField(index: ReadonlyIndex, frame: string, name: string): string {
  const own = intFieldName(frame, name);
  if (index.field(own) !== undefined) return own;
  if (index.field(name)?.options.type === 'int') return name;
  return own;
}

/** The names the PQL rewrite needs, read from an index (defaults when it does not exist). */
export function legacyNames(index: ReadonlyIndex | undefined): LegacyNames {
  return {
    rowLabel: (frame) =>
      index === undefined ? DEFAULT_ROW_LABEL : (frameMeta(index, frame)?.rowLabel ?? DEFAULT_ROW_LABEL),
    columnLabel: () => (index === undefined ? DEFAULT_COLUMN_LABEL : columnLabel(index)),
    intField: (frame, name) => (index === undefined ? intFieldName(frame, name) : resolveIntField(index, frame, name)),
    inverseEnabled: (frame) => index !== undefined && inverseEnabled(index, frame),
  };
}
