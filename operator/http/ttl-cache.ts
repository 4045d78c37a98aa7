// A bounded cache whose entries expire: at most `maxEntries`, the least recently used evicted first; time is injected.

/** Options of {@link TtlCache}. */
export interface TtlCacheOptions {
  /** The most entries kept; adding one more evicts the least recently used. */
  readonly maxEntries: number;
  /** The clock, in milliseconds. @default Date.now */
  readonly now?: () => number;
}

/**
 * Entries live until their own deadline (each `set` says how long), and at most `maxEntries` live at once, so the
 * cache cannot grow with what callers send (kube-apiserver's webhook authorizer bounds its cache the same way, an LRU
 * of 8,192 entries). A Map keeps insertion order: a read moves the entry to the end, so the first key is the least
 * recently used. An expired entry is dropped when it is read or when it reaches the front.
 */
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { readonly value: V; readonly expiresAt: number }>();
  private readonly now: () => number;

  constructor(private readonly options: TtlCacheOptions) {
    if (!(options.maxEntries >= 1)) throw new Error(`TtlCache: maxEntries ${options.maxEntries} must be at least 1`);
    this.now = options.now ?? Date.now;
  }

  /** The value of `key` if it has not expired; a hit becomes the most recently used. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` for `ttlMs` (0 or less keeps nothing), evicting the least recently used past the bound. */
  set(key: K, value: V, ttlMs: number): void {
    this.entries.delete(key);
    if (ttlMs <= 0) return;
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.options.maxEntries) break;
      this.entries.delete(oldest);
    }
  }

  /** Entries held now, expired ones not yet dropped included. */
  get size(): number {
    return this.entries.size;
  }
}
