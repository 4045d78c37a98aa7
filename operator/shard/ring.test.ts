// The ring: each member owns its share within a bound, and a join or leave moves about 1/N of the keys, nothing else.
import test from 'ava';
import { ownerOf, sameView, viewDigest, viewOf } from './ring.js';

const KEYS = Array.from({ length: 20_000 }, (_, index) => `ns-${index % 37}/app-${index}`);

function shares(view: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>(view.map((member) => [member, 0]));
  for (const key of KEYS) {
    const owner = ownerOf(key, view)!;
    counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  return counts;
}

for (const size of [2, 3, 4, 7]) {
  test(`${size} members each own 1/${size} of the keys within 6 %`, (t) => {
    const view = viewOf(Array.from({ length: size }, (_, index) => `customapp-operator-7d9f-${index}_${'abcdef'[index % 6]}`));
    const fair = KEYS.length / size;
    for (const [member, count] of shares(view)) t.true(Math.abs(count - fair) / fair < 0.06, `${member} owns ${count}, fair is ${fair}`);
  });
}

test('a member that joins takes about 1/N of the keys, each from its previous owner, and nothing else moves', (t) => {
  const before = viewOf(['a', 'b', 'c']);
  const after = viewOf([...before, 'd']);
  let moved = 0;
  for (const key of KEYS) {
    const [was, is] = [ownerOf(key, before), ownerOf(key, after)];
    if (was === is) continue;
    moved += 1;
    t.is(is, 'd', `${key} moved from ${was} to ${is}, not to the newcomer`);
  }
  t.true(Math.abs(moved / KEYS.length - 1 / 4) < 0.02, `${moved} of ${KEYS.length} moved`);
});

test('a member that leaves gives away only its own keys, about 1/N', (t) => {
  const before = viewOf(['a', 'b', 'c', 'd']);
  const after = viewOf(['a', 'b', 'd']);
  let moved = 0;
  for (const key of KEYS) {
    const [was, is] = [ownerOf(key, before), ownerOf(key, after)];
    if (was === is) continue;
    moved += 1;
    t.is(was, 'c', `${key} moved from ${was}, which stayed`);
  }
  t.true(Math.abs(moved / KEYS.length - 1 / 4) < 0.02, `${moved} of ${KEYS.length} moved`);
});

test('a view is its members once, sorted; its digest and owners do not depend on the order they were seen in', (t) => {
  const view = viewOf(['c', 'a', 'b', 'a']);
  t.deepEqual(view, ['a', 'b', 'c']);
  t.true(sameView(view, viewOf(['b', 'c', 'a'])));
  t.false(sameView(view, viewOf(['a', 'b'])));
  t.is(viewDigest(view), viewDigest(viewOf(['b', 'a', 'c'])));
  t.not(viewDigest(view), viewDigest(viewOf(['a', 'b'])));
  t.regex(viewDigest(view), /^[0-9a-f]{12}$/);
  t.is(ownerOf('ns/x', []), undefined);
  t.is(ownerOf('ns/x', ['only']), 'only');
});
