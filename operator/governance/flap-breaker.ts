// The flap breaker: per referenced object, more than N content changes within a window open its breaker: its apps wait until it is quiet.
import type { DependencyState } from '../dependencies/source.js';
import { refKey, refKeys, useKey } from '../dependencies/source.js';

/** Options of {@link FlapBreaker}. */
export interface FlapBreakerOptions {
  /** More than this many content changes within the window open the breaker; 0 turns the breaker off. */
  readonly threshold: number;
  /** The window, in ms; an open breaker closes once the object has not changed for this long. */
  readonly windowMs: number;
  /**
   * Whether a ref (by {@link refKey}) is still referenced by some CustomApp: a quiet ref that is not is forgotten.
   * @default every ref is kept
   */
  readonly referenced?: (ref: string) => boolean;
}

/** What the breaker says of one ref. */
export type BreakerState =
  | { readonly open: false }
  | {
      readonly open: true;
      /** Content changes within the window when it opened (or when last checked, if more). */
      readonly changes: number;
      /** ms until the object will have been quiet for the whole window (when the breaker closes, unless it changes). */
      readonly quietInMs: number;
    };

interface RefHistory {
  /**
   * The last state seen through the first view of the object (`useKey`: the whole object, or some keys of it):
   * `absent`, or the content hash. A view's first state is no change. Most objects are seen through one view: the
   * others, if any, are in {@link more}, so that one entry per referenced object needs no Map of its own. Unset
   * until a state is seen (an entry {@link FlapBreaker.reopen} or {@link FlapBreaker.touch} made at a restart).
   */
  view?: string;
  text?: string;
  /** The last state seen through each further view. */
  more?: Map<string, string>;
  /**
   * The object event the last change counted was seen in (its resourceVersion, or `absent`) and through which view:
   * the same event seen through another view (one edit of a key that a whole ref and a ref with keys both follow) is
   * the same change, counted once.
   */
  counted?: { readonly view: string; readonly event: string };
  /** Times of the content changes within the window (a shared empty array while there is none). */
  changes: readonly number[];
  /** When the last change was seen. */
  lastChange?: number;
  /** Set while open: when it opened. */
  openedAt?: number;
}

/** The changes of a ref that has had none within the window: shared, never written. */
const NO_CHANGES: readonly number[] = Object.freeze([]);

/** One full sweep of quiet, unreferenced refs per this many observations (amortized; no timer). */
const SWEEP_EVERY = 512;

/**
 * Counts the content changes of each referenced ConfigMap and Secret, as the DependencySource's `changes` reports them
 * (its first emission for a ref is its initial state, not a change). More than `threshold` changes within `windowMs`
 * open the ref's breaker; it stays open until the ref has gone `windowMs` without a change, then closes by itself: a
 * waiting app asks again after {@link BreakerState.quietInMs} (a requeue-after), so nothing needs a timer. Time comes from
 * the caller (`now`, ms). Memory: one small entry per ref seen; quiet refs no CustomApp references are swept.
 *
 * The history is in memory only. After a restart, {@link reopen} re-opens the breakers that the CustomApps' status
 * says were open, for a new full window (conservative: the object may have been quiet for a while already).
 */
export class FlapBreaker {
  private readonly refs = new Map<string, RefHistory>();
  private observations = 0;

  constructor(private readonly options: FlapBreakerOptions) {
    if (!Number.isInteger(options.threshold) || options.threshold < 0) {
      throw new Error(`flap breaker: threshold ${JSON.stringify(options.threshold)} is not an integer ≥ 0`);
    }
    if (!(options.windowMs > 0)) throw new Error(`flap breaker: window ${JSON.stringify(options.windowMs)} ms is not positive`);
  }

  /** False when the threshold is 0: no breaker ever opens (changes are still timed, for the debounce). */
  get enabled(): boolean {
    return this.options.threshold > 0;
  }

  get windowMs(): number {
    return this.options.windowMs;
  }

  get threshold(): number {
    return this.options.threshold;
  }

  /**
   * Records a state of a ref from the DependencySource's `changes`. Answers `changed` for a content or existence
   * change, `opened` when that change opened the breaker, `initial` for the first state seen, `same` otherwise.
   */
  observe(state: DependencyState, now: number): 'initial' | 'same' | 'changed' | 'opened' {
    this.observations += 1;
    if (this.observations % SWEEP_EVERY === 0) this.sweep(now);
    const key = refKey(state.ref);
    // The whole object's view is its refKey: one string for both.
    const view = refKeys(state.ref) ? useKey(state.ref) : key;
    const text = state.exists ? state.hash : 'absent';
    const history = this.history(key);
    this.refs.set(key, history);
    if (history.view === undefined) {
      history.view = view;
      history.text = text;
      return 'initial';
    }
    const before = history.view === view ? history.text : history.more?.get(view);
    if (history.view === view) history.text = text;
    else (history.more ??= new Map()).set(view, text);
    if (before === undefined) return 'same';
    if (before === text) return 'same';
    const event = state.exists ? state.resourceVersion : 'absent';
    if (history.counted && history.counted.view !== view && history.counted.event === event) return 'same';
    history.counted = { view, event };
    this.closeIfQuiet(history, now);
    history.changes = [...history.changes.filter((at) => now - at < this.options.windowMs), now];
    history.lastChange = now;
    if (this.enabled && history.openedAt === undefined && history.changes.length > this.options.threshold) {
      history.openedAt = now;
      return 'opened';
    }
    return 'changed';
  }

  /** The history of `ref` (a {@link refKey}), a new one when it has none (the caller stores it). */
  private history(ref: string): RefHistory {
    return this.refs.get(ref) ?? { changes: NO_CHANGES };
  }

  /** The breaker of `ref` (a {@link refKey}) at `now`. */
  check(ref: string, now: number): BreakerState {
    const history = this.refs.get(ref);
    if (!history) return { open: false };
    this.closeIfQuiet(history, now);
    if (history.openedAt === undefined || history.lastChange === undefined) return { open: false };
    return {
      open: true,
      changes: history.changes.filter((at) => now - at < this.options.windowMs).length,
      quietInMs: history.lastChange + this.options.windowMs - now,
    };
  }

  /** When `ref` last changed (ms), if a change was seen since this process started (or {@link touch}ed). */
  lastChange(ref: string): number | undefined {
    return this.refs.get(ref)?.lastChange;
  }

  /** Restart: opens the breaker of `ref` as if it had just changed, for a new full window. */
  reopen(ref: string, now: number): void {
    const history = this.history(ref);
    history.lastChange = now;
    history.openedAt ??= now;
    if (history.changes.length === 0) history.changes = [now];
    this.refs.set(ref, history);
  }

  /** Restart: `ref` counts as changed at `now` (a debounce in progress starts again), without counting a change. */
  touch(ref: string, now: number): void {
    const history = this.history(ref);
    history.lastChange = now;
    this.refs.set(ref, history);
  }

  /** How many breakers are open at `now`. */
  openCount(now: number): number {
    let open = 0;
    for (const history of this.refs.values()) {
      this.closeIfQuiet(history, now);
      if (history.openedAt !== undefined) open += 1;
    }
    return open;
  }

  /** Refs remembered (for tests: the sweep keeps this bounded). */
  get size(): number {
    return this.refs.size;
  }

  /** Forgets every ref that is quiet (no change within the window, breaker closed) and no longer referenced. */
  sweep(now: number): void {
    const referenced = this.options.referenced;
    if (!referenced) return;
    for (const [key, history] of this.refs) {
      this.closeIfQuiet(history, now);
      const quiet = history.lastChange === undefined || now - history.lastChange >= this.options.windowMs;
      if (quiet && history.openedAt === undefined && !referenced(key)) this.refs.delete(key);
    }
  }

  private closeIfQuiet(history: RefHistory, now: number): void {
    if (history.openedAt !== undefined && history.lastChange !== undefined && now - history.lastChange >= this.options.windowMs) {
      history.openedAt = undefined;
      history.changes = NO_CHANGES;
    }
  }
}
