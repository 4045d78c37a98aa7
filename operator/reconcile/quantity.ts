// The form of a Kubernetes resource quantity the API server stores (so that a desired Deployment equals the stored one).

import { RESOURCE_QUANTITY } from '../../api/customapp.js';

const DECIMAL_EXPONENTS: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_EXPONENTS: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIXES: ReadonlyMap<number, string> = new Map(
  Object.entries(DECIMAL_EXPONENTS).map(([suffix, exponent]) => [exponent, suffix]),
);
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const INT64_MAX = 2n ** 63n - 1n;
/** apimachinery's `maxInt64Factors`: the decimal digits an int64 always holds. */
const INT64_DIGITS = 18;
/** Nanounits: the API server parses anything finer rounded up to this scale. */
const NANO = -9;
/** Milliunits: a resource list (a container's requests and limits) is stored rounded up to this scale. */
const MILLI = -3;

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** A non-negative amount, `units × 10^exponent`, exactly. */
interface Decimal {
  readonly units: bigint;
  readonly exponent: number;
}

/**
 * `quantity` (a {@link RESOURCE_QUANTITY}) as a kube-apiserver stores it in a container's requests or limits: a port of
 * apimachinery's `ParseQuantity`, of core/v1's defaulting of a resource list (`RoundUp` to milliunits) and of
 * `Quantity.String()`, for non-negative amounts. Most spellings become the canonical form (`1000m` is `1`, `0.5` is
 * `500m`, `1.5Gi` is `1536Mi`, `1024Mi` is `1Gi`, `0.1Ki` is `102400m`, `0.0001` is rounded up to `1m`), but a spelling
 * that parses on the int64 path, already looks canonical and needs no rounding is stored as written (`1.125` stays
 * `1.125`, not `1125m`): the API server keeps the string it parsed. test/e2e/customapp-container.test.ts checks this
 * against a real API server with random spellings.
 */
export function canonicalQuantity(quantity: string): string {
  if (!new RegExp(RESOURCE_QUANTITY).test(quantity)) {
    throw new Error(`quantity ${JSON.stringify(quantity)} is not a resource quantity such as "250m", "0.5" or "1.5Gi"`);
  }
  if (quantity === '0') return quantity;
  const { integer, fraction, suffix } = split(quantity);
  const binary = BINARY_EXPONENTS[suffix];
  const format: Format = binary !== undefined ? 'BinarySI' : suffix in DECIMAL_EXPONENTS ? 'DecimalSI' : 'DecimalExponent';
  const exponent = binary ?? DECIMAL_EXPONENTS[suffix] ?? Number(suffix.slice(1));
  const fast = fastPath(quantity, integer, fraction, format, exponent);
  if (typeof fast === 'string') return fast;
  if (fast) return canonical(roundUp(fast, MILLI), format);

  // The slow path: the exact amount, rounded up to nanounits; a binary amount is capped at the largest int64, and one
  // under 1 is written as decimal.
  let amount: Decimal = { units: BigInt(`${integer}${fraction}`), exponent: -fraction.length };
  amount =
    binary === undefined
      ? { units: amount.units, exponent: amount.exponent + exponent }
      : { units: amount.units * 2n ** BigInt(binary), exponent: amount.exponent };
  if (amount.units !== 0n && amount.exponent < NANO) amount = roundUp(amount, NANO);
  let slowFormat = format;
  if (format === 'BinarySI') {
    if (compare(amount, { units: INT64_MAX, exponent: 0 }) > 0) amount = { units: INT64_MAX, exponent: 0 };
    if (amount.units !== 0n && compare(amount, { units: 1n, exponent: 0 }) < 0) slowFormat = 'DecimalSI';
  }
  return canonical(roundUp(amount, MILLI), slowFormat);
}

/** The parts of a quantity as apimachinery's `parseQuantityString` splits it: leading zeros of the integer dropped. */
function split(quantity: string): { integer: string; fraction: string; suffix: string } {
  const match = /^([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(quantity)!;
  return { integer: match[1]!.replace(/^0+/, '') || '0', fraction: match[2] ?? '', suffix: match[3]! };
}

/**
 * ParseQuantity's int64 path: the amount when it fits in an int64 at nanounits or coarser, or `quantity` itself when
 * the API server keeps the string as written; undefined for the slow path.
 */
function fastPath(quantity: string, integer: string, fraction: string, format: Format, exponent: number): Decimal | string | undefined {
  let scale = 0;
  let multiplier = 1n;
  let precision: number;
  if (format === 'BinarySI') {
    if (fraction.length > 0) return undefined;
    multiplier = 2n ** BigInt(exponent);
    precision = 15 - integer.length - Math.trunc((exponent * 3) / 10) - 1;
  } else {
    scale = exponent;
    precision = INT64_DIGITS - (integer.length + fraction.length);
  }
  if (precision < 0) return undefined;
  scale -= fraction.length;
  if (scale < NANO) return undefined;
  const shifted = `${integer}${fraction}`;
  const value = BigInt(shifted);
  const units = value * multiplier;
  if (value > INT64_MAX || units > INT64_MAX) return undefined;
  const keepsString =
    format === 'BinarySI'
      ? exponent % 10 === 0 && (value & 7n) !== 0n
      : scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0');
  // RoundUp keeps the string only when the scale needs no rounding.
  return keepsString && scale >= MILLI ? quantity : { units, exponent: scale };
}

/** `Quantity.CanonicalizeBytes`: zero is `0`; binary in powers of 1024 when whole and at least 1024; else decimal. */
function canonical(amount: Decimal, format: Format): string {
  if (amount.units === 0n) return '0';
  if (format === 'BinarySI' && compare(amount, { units: 1024n, exponent: 0 }) >= 0) {
    const whole = roundUp(amount, 0);
    if (compare(whole, amount) === 0) {
      let units = whole.units * 10n ** BigInt(whole.exponent);
      let times = 0;
      while (units % 1024n === 0n) {
        units /= 1024n;
        times += 1;
      }
      return `${units}${BINARY_SUFFIXES[times]}`;
    }
  }
  let { units, exponent } = amount;
  while (units % 10n === 0n) {
    units /= 10n;
    exponent += 1;
  }
  while (((exponent % 3) + 3) % 3 !== 0) {
    units *= 10n;
    exponent -= 1;
  }
  if (format === 'DecimalExponent') return exponent === 0 ? `${units}` : `${units}e${exponent}`;
  const suffix = DECIMAL_SUFFIXES.get(exponent);
  if (suffix === undefined) throw new Error(`a quantity of ${units}e${exponent} has no SI suffix`);
  return `${units}${suffix}`;
}

/** `amount` rounded up (away from zero) to `exponent`: at most `exponent` as its own exponent. */
function roundUp(amount: Decimal, exponent: number): Decimal {
  if (amount.exponent >= exponent) return amount;
  const divisor = 10n ** BigInt(exponent - amount.exponent);
  const units = amount.units / divisor + (amount.units % divisor === 0n ? 0n : 1n);
  return { units, exponent };
}

function compare(a: Decimal, b: Decimal): number {
  const exponent = Math.min(a.exponent, b.exponent);
  const left = a.units * 10n ** BigInt(a.exponent - exponent);
  const right = b.units * 10n ** BigInt(b.exponent - exponent);
  return left === right ? 0 : left < right ? -1 : 1;
}
