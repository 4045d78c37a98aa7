// The canonical form of a Kubernetes resource quantity, as the API server stores it (so that a desired Deployment equals the stored one).

import { RESOURCE_QUANTITY } from '../../api/customapp.js';

const DECIMAL_EXPONENTS: Readonly<Record<string, number>> = { m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15 };
const BINARY_POWERS: Readonly<Record<string, number>> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5 };
const DECIMAL_SUFFIXES: Readonly<Record<number, string>> = { [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/**
 * `quantity` (a `RESOURCE_QUANTITY`: whole, no fraction or exponent) as apimachinery's `Quantity.String()` writes it, which is what a stored
 * Deployment holds: a decimal amount loses its trailing zeros into the largest suffix a multiple of 3 allows (`1000`
 * is `1k`, `2000m` is `2`, `1500` stays); a binary one under 1024 is written as decimal, else divided by 1024 as
 * often as it goes exactly (`1024Mi` is `1Gi`, `1536Mi` stays). Throws on any other form.
 */
export function canonicalQuantity(quantity: string): string {
  const match = new RegExp(RESOURCE_QUANTITY).exec(quantity);
  if (!match) throw new Error(`quantity ${JSON.stringify(quantity)} is not a whole number with a suffix (${RESOURCE_QUANTITY})`);
  const suffix = match[1] ?? '';
  let amount = BigInt(quantity.slice(0, quantity.length - suffix.length));
  if (amount === 0n) return '0';
  const power = BINARY_POWERS[suffix];
  if (power !== undefined) {
    amount *= 1024n ** BigInt(power);
    if (amount >= 1024n) {
      let times = 0;
      while (amount % 1024n === 0n && times < BINARY_SUFFIXES.length - 1) {
        amount /= 1024n;
        times += 1;
      }
      return `${amount}${BINARY_SUFFIXES[times]}`;
    }
    return decimal(amount, 0);
  }
  return decimal(amount, DECIMAL_EXPONENTS[suffix]!);
}

/** `amount × 10^exponent` with its trailing zeros moved into the exponent, then the exponent lowered to a multiple of 3. */
function decimal(amount: bigint, exponent: number): string {
  let value = amount;
  let scale = exponent;
  while (value % 10n === 0n) {
    value /= 10n;
    scale += 1;
  }
  while (((scale % 3) + 3) % 3 !== 0) {
    value *= 10n;
    scale -= 1;
  }
  while (scale > 18) {
    value *= 1000n;
    scale -= 3;
  }
  return `${value}${DECIMAL_SUFFIXES[scale]}`;
}
