// The form of a Kubernetes resource quantity the API server stores (so that a desired Deployment equals the stored one).

import { MAX_WHOLE_QUANTITY, RESOURCE_QUANTITY } from '../../api/customapp.js';

const DECIMAL_EXPONENTS: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_EXPONENTS: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_SUFFIXES: ReadonlyMap<number, string> = new Map(
  Object.entries(DECIMAL_EXPONENTS).map(([suffix, exponent]) => [exponent, suffix]),
);
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const INT64_MAX = 2n ** 63n - 1n;
/** apimachinery's `maxInt64Factors`: the decimal digits an int64 always holds. */
const INT64_DIGITS = 18;
/** Milliunits: a resource list (a container's requests and limits) is stored rounded up to this scale. */
const MILLI = -3;
const QUANTITY = new RegExp(RESOURCE_QUANTITY);

type Format = 'DecimalSI' | 'BinarySI';

/** A non-negative amount, `units × 10^exponent`, exactly. */
interface Decimal {
  readonly units: bigint;
  readonly exponent: number;
}

/**
 * `quantity` (a {@link RESOURCE_QUANTITY}, or a whole number up to {@link MAX_WHOLE_QUANTITY}) as a kube-apiserver
 * stores it in a container's requests or limits. A number is its decimal spelling (a Pod's `cpu: 1000` is stored as
 * `1k`, like `"1000"`); a string goes through a port of
 * apimachinery's `ParseQuantity`, of core/v1's defaulting of a resource list (`RoundUp` to milliunits) and of
 * `Quantity.String()`, for the non-negative decimal and binary spellings the schema takes. Most spellings become the
 * canonical form (`1000m` is `1`, `0.5` is `500m`, `1.5Gi` is `1536Mi`, `1024Mi` is `1Gi`, `0.1Ki` is `102400m`, `0.0001`
 * is rounded up to `1m`), but a spelling that parses on the int64 path, already looks canonical and needs no rounding is
 * stored as written (`1.125` stays `1.125`, not `1125m`): the API server keeps the string it parsed.
 * test/e2e/customapp-container.test.ts checks this against a real API server with random spellings.
 */
export function canonicalQuantity(quantity: string | number): string {
  if (typeof quantity === 'number') return canonicalQuantity(wholeSpelling(quantity));
  if (!QUANTITY.test(quantity)) {
    throw new Error(`quantity ${JSON.stringify(quantity)} is not a resource quantity such as "250m", "0.5" or "1.5Gi"`);
  }
  if (quantity === '0') return quantity;
  const { integer, fraction, suffix } = split(quantity);
  const binary = BINARY_EXPONENTS[suffix];
  if (keptAsWritten(integer, fraction, binary, DECIMAL_EXPONENTS[suffix])) return quantity;
  const digits = BigInt(`${integer}${fraction}`);
  if (binary === undefined) {
    return canonical(roundUp({ units: digits, exponent: DECIMAL_EXPONENTS[suffix]! - fraction.length }, MILLI), 'DecimalSI');
  }
  // The API server caps a binary amount at the largest int64.
  const amount: Decimal = { units: digits * 2n ** BigInt(binary), exponent: -fraction.length };
  const capped = compare(amount, { units: INT64_MAX, exponent: 0 }) > 0 ? { units: INT64_MAX, exponent: 0 } : amount;
  return canonical(roundUp(capped, MILLI), 'BinarySI');
}

/**
 * The decimal spelling of a whole number the schema takes. A fraction cannot reach here through the API server (the
 * schema takes integers and strings); it is refused all the same, like a number past 2^53 - 1, whose digits a
 * JavaScript number no longer holds.
 */
function wholeSpelling(quantity: number): string {
  if (!(Number.isInteger(quantity) && quantity >= 0 && quantity <= MAX_WHOLE_QUANTITY)) {
    throw new Error(
      `quantity ${quantity} is not a whole number from 0 to ${MAX_WHOLE_QUANTITY}: quote a fraction ("0.5") or write it in milli ("500m")`,
    );
  }
  return String(quantity);
}

/** The parts of a quantity as apimachinery's `parseQuantityString` splits it: leading zeros of the integer dropped. */
function split(quantity: string): { integer: string; fraction: string; suffix: string } {
  const match = /^([0-9]*)(?:\.([0-9]*))?(.*)$/.exec(quantity)!;
  return { integer: match[1]!.replace(/^0+/, '') || '0', fraction: match[2] ?? '', suffix: match[3]! };
}

/**
 * Whether the API server stores `quantity` as written: ParseQuantity keeps the string when it parses on its int64 path
 * (the digits fit, at nanounits or coarser) and the string already looks canonical (decimal: a scale that is a multiple
 * of 3, digits neither ending in 000 nor starting with 0; binary: a number that is no multiple of 8), and the round-up
 * to milliunits keeps it when the scale needs no rounding. Any other spelling is stored as its canonical form.
 */
function keptAsWritten(integer: string, fraction: string, binary: number | undefined, decimal: number | undefined): boolean {
  const shifted = `${integer}${fraction}`;
  if (binary !== undefined) {
    const precision = 15 - integer.length - Math.trunc((binary * 3) / 10) - 1;
    const value = BigInt(shifted);
    return fraction.length === 0 && precision >= 0 && value * 2n ** BigInt(binary) <= INT64_MAX && (value & 7n) !== 0n;
  }
  const scale = decimal! - fraction.length;
  return shifted.length <= INT64_DIGITS && scale >= MILLI && scale % 3 === 0 && !shifted.endsWith('000') && !shifted.startsWith('0');
}

/**
 * `Quantity.CanonicalizeBytes`: zero is `0`; binary in powers of 1024 when whole and at least 1024 (below that, or with
 * a fraction, as decimal); decimal with its trailing zeros in the largest suffix a multiple of 3 allows.
 */
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
