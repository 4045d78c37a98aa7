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

test('other forms are refused, quoting them', (t) => {
  t.throws(() => canonicalQuantity('0.5'), { message: /"0\.5"/ });
  t.throws(() => canonicalQuantity('1e3'), { message: /"1e3"/ });
  t.throws(() => canonicalQuantity('-1'), { message: /"-1"/ });
});
