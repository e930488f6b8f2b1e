import { badRequest } from './errors.js';

// Pilosa's rule for index and field names (v1.4 pilosa.go nameRegexp).
const NAME = /^[a-z][a-z0-9_-]{0,63}$/;

export function validateName(name: string): void {
  if (!NAME.test(name)) {
    throw badRequest(
      `validating name: '${name}': invalid index or field name, must match [a-z][a-z0-9_-]* and contain at most 64 characters`,
    );
  }
}

/** The hidden field that records every column ever written (existence tracking). */
export const EXISTS_FIELD = '_exists';
/** Fields the server keeps itself (user names start with a letter): never deleted by request. */
export const isReservedField = (name: string): boolean => name.startsWith('_');
export const STANDARD_VIEW = 'standard';
/** 0.x inverse view of an inverseEnabled frame: keyed by column, rows and columns transposed. */
export const INVERSE_VIEW = 'inverse';
export const BSI_VIEW_PREFIX = 'bsig_';
export const bsiViewName = (field: string): string => `${BSI_VIEW_PREFIX}${field}`;
