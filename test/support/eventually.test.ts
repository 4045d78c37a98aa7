// The polling helper: what it resolves, and a timeout that names what was awaited and what was last seen.
import test from 'ava';
import { eventually } from './eventually.js';

test('resolves the first answer that is neither undefined nor false, after errors and "not yet"', async (t) => {
  const answers: Array<() => unknown> = [
    () => undefined,
    () => false,
    () => {
      throw new Error('refused');
    },
    () => 0,
  ];
  let calls = 0;
  const value = await eventually('a zero', () => answers[calls++]!(), 1_000, 1);
  t.is(value, 0, 'zero is an answer');
  t.is(calls, 4);
});

test('a timeout names what was awaited and the last answer seen, then the state described', async (t) => {
  const replicas = { ready: 2, want: 3 };
  const error = await t.throwsAsync(eventually('three replicas', () => replicas.ready === replicas.want, 30, 1));
  t.is(error!.message, 'three replicas: not within 30 ms; last seen: false');
  const described = await t.throwsAsync(
    eventually(
      'three replicas',
      () => undefined,
      30,
      1,
      () => `ready: ${replicas.ready}`,
    ),
  );
  t.is(described!.message, 'three replicas: not within 30 ms; last seen: undefined\nready: 2');
});

test('a timeout after a probe that threw says so, with the error as its cause', async (t) => {
  const refused = new Error('connection refused');
  const error = await t.throwsAsync(
    eventually(
      'the API answers',
      () => {
        throw refused;
      },
      20,
      1,
    ),
  );
  t.is(error!.message, 'the API answers: not within 20 ms; last seen: an error (connection refused)');
  t.is(error!.cause, refused);
});
