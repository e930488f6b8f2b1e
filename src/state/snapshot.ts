// What the snapshot writer (events/state-events.ts) takes of the state besides events.
import type { ReadonlyFragment } from './readonly.js';

/**
 * A fragment of the state, for the snapshot writer to take its rows as they are held
 * (Fragment.captureRow: packed rows as their bytes, with no view made); fragmentEvent
 * (events/state-events.ts) gives it as the BitsSet that rebuilds it.
 */
export interface FragmentState {
  type: 'Fragment';
  index: string;
  field: string;
  view: string;
  fragment: ReadonlyFragment;
}
