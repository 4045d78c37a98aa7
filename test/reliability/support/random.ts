// A seeded pseudo-random source (mulberry32) for reproducible fault schedules and operation streams.

/** Deterministic randomness from a 32-bit seed: the same seed gives the same sequence. */
export class SeededRandom {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A number in [0, 1). */
  next = (): number => {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let value = this.state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick: no items');
    return items[this.int(items.length)]!;
  }

  /** A key of `weights`, drawn in proportion to its weight. */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as [K, number][];
    let left = this.next() * entries.reduce((sum, [, weight]) => sum + weight, 0);
    for (const [key, weight] of entries) {
      left -= weight;
      if (left < 0) return key;
    }
    return entries[entries.length - 1]![0];
  }

  /** An independent generator derived from this one (so that one stream's draws do not shift another's). */
  fork(): SeededRandom {
    return new SeededRandom(Math.floor(this.next() * 4294967296));
  }
}

/** The seed from `SOAK_SEED` (decimal), or a fresh one; print it so that a run can be repeated. */
export function seedFromEnvironment(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SOAK_SEED?.trim();
  if (!raw) return Math.floor(Math.random() * 4294967296);
  const seed = Number(raw);
  if (!Number.isInteger(seed) || seed < 0 || seed >= 4294967296) throw new Error(`SOAK_SEED="${raw}" is not an integer in [0, 2^32)`);
  return seed;
}
