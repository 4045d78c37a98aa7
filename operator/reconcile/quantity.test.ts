// Tests of the canonical quantity form: the strings a real API server stores for what spec.resources accepts.
import test from 'ava';
import { canonicalQuantity } from './quantity.js';

test('decimal quantities lose trailing zeros into the largest suffix; binary ones divide by 1024 while exact', (t) => {
  const cases: [string, string][] = [
    ['0', '0'],
    ['0Mi', '0'],
    ['500m', '500m'],
    ['1000m', '1'],
    ['1500m', '1500m'],
    ['2000m', '2'],
    ['1', '1'],
    ['1000', '1k'],
    ['1500', '1500'],
    ['64Mi', '64Mi'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['2000Ki', '2000Ki'],
    ['1Ki', '1Ki'],
    ['128974848', '128974848'],
    ['129M', '129M'],
    ['1000M', '1G'],
  ];
  for (const [given, stored] of cases) t.is(canonicalQuantity(given), stored, given);
});

test('fractions: rounded up to milliunits, decimal ones in the largest suffix a multiple of 3 allows, binary ones in 1024s when whole', (t) => {
  const cases: [string, string][] = [
    ['0.5', '500m'],
    ['1.5', '1500m'],
    ['0.125', '125m'],
    ['2.5k', '2500'],
    ['1.5M', '1500k'],
    ['0.000001m', '1m'],
    ['0.000002', '1m'],
    ['0.0005', '1m'],
    ['3.629594', '3630m'],
    ['84969907.736m', '84969908m'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['0.5Ki', '512'],
    ['0.1Ki', '102400m'],
    ['1.1Ki', '1126400m'],
    ['100000000T', '100E'],
  ];
  for (const [given, stored] of cases) t.is(canonicalQuantity(given), stored, given);
});

test('a spelling the API server parses on its int64 path, finds canonical and need not round is kept as written', (t) => {
  // Its scale a multiple of 3 and at least milli, its digits neither ending in 000 nor starting with 0; binary: not a
  // multiple of 8.
  for (const kept of ['1.125', '1.500', '2.250k', '1.001', '7Ki', '1025Mi']) t.is(canonicalQuantity(kept), kept, kept);
  t.is(canonicalQuantity('8Ki'), '8Ki', 'a multiple of 8 is written again, the same');
});

test('a binary amount past the largest int64 is capped there, as the API server caps it', (t) => {
  t.is(canonicalQuantity('999999999Ti'), '9223372036854775807');
});

test('a whole number is its decimal spelling, as a Pod reads an unquoted quantity (memory: 1073741824 is 1073741824 bytes)', (t) => {
  const cases: [number, string][] = [
    [0, '0'],
    [1, '1'],
    [2, '2'],
    [1000, '1k'],
    [1500, '1500'],
    [1073741824, '1073741824'],
    [10_000_000_000, '10G'],
    [Number.MAX_SAFE_INTEGER, '9007199254740991'],
  ];
  for (const [given, stored] of cases) t.is(canonicalQuantity(given), stored, String(given));
});

test('a plain integer string takes up to 16 digits, so that every whole number the schema takes has a quoted spelling too', (t) => {
  t.is(canonicalQuantity('1073741824'), '1073741824');
  t.is(canonicalQuantity('9999999999999999'), '9999999999999999');
  t.is(canonicalQuantity('1234567890123000'), '1234567890123k');
});

test('numbers the schema refuses are refused here too, quoting them: fractions, negatives, beyond 2^53 - 1, not finite', (t) => {
  for (const refused of [0.5, -1, -0.5, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY]) {
    t.throws(
      () => canonicalQuantity(refused),
      { message: new RegExp(`quantity ${String(refused).replace(/[.+]/g, '\\$&')} `) },
      String(refused),
    );
  }
});

test('other forms are refused, quoting them', (t) => {
  for (const refused of [
    '1e3',
    '-1',
    '.5',
    '1.',
    '01',
    '1.1234567',
    '12345678901234567',
    '1234567890.5',
    '1234567890k',
    '1P',
    '5n',
    '+1',
    ' 1',
  ]) {
    t.throws(() => canonicalQuantity(refused), { message: new RegExp(`"${refused.replace(/[.+]/g, '\\$&')}"`) }, refused);
  }
});
