// The relist bounds' counts: the scope versions a shard's log shows in a window, once each; the streams subscribed again.
import test from 'ava';
import { resubscriptions, scopeChanges } from './scope-changes.js';

const at = (second: number): string => new Date(Date.UTC(2026, 11, 2, 5, 52, second)).toISOString();
const line = (second: number, msg: string, fields: Record<string, unknown>): string =>
  JSON.stringify({ level: 30, time: at(second), component: 'shard', msg, ...fields });

test('two members leaving at once are one scope change; a view superseded before its acknowledgement counts; renewals and other lines do not', (t) => {
  const log = [
    line(1, 'shard.member.left', { left: 'b', members: 1, scope: 4 }),
    line(1, 'shard.member.left', { left: 'c', members: 1, scope: 4 }),
    // The view changes again before the one above was acknowledged.
    line(2, 'shard.member.joined', { joined: 'b', members: 2, scope: 5 }),
    line(3, 'shard.drained', { view: 'eddd81064758', members: 2, scope: 6 }),
    line(3, 'shard.ownership', { members: ['a', 'b'], acquired: 0, released: 3 }),
    'not JSON: a line the runtime printed',
    line(9, 'shard.member.joined', { joined: 'c', members: 3, scope: 7 }),
  ].join('\n');
  t.is(scopeChanges(log, Date.parse(at(0)), Date.parse(at(5))), 3);
  t.is(scopeChanges(`${log}\n${log}`, Date.parse(at(0)), Date.parse(at(5))), 3, 'a log read twice counts each version once');
  t.is(scopeChanges(log, Date.parse(at(2)), Date.parse(at(10))), 3);
  t.is(scopeChanges(line(1, 'shard.member.left', { left: 'b', members: 1 }), 0, Date.parse(at(5))), 0, 'a line of another build');
});

test('a stream subscribed again in the window explains one more LIST; a first subscription, a line seen twice and one outside the window do not', (t) => {
  const stream = (second: number, name: string, msg = 'subscribed'): string =>
    JSON.stringify({ level: 30, time: at(second), stream: `configmap ns/${name}`, resource: 'configmaps', msg });
  const log = [
    stream(1, 'a'),
    stream(2, 'b'),
    stream(20, 'a', 'unsubscribed'),
    stream(22, 'a'),
    stream(22, 'a'),
    stream(40, 'b', 'listed'),
    stream(59, 'b'),
  ].join('\n');
  const from = Date.parse(at(0));
  t.is(resubscriptions(log, from, Date.parse(at(30))), 1, 'a again at 22 s (seen twice in joined logs)');
  t.is(resubscriptions(log, from, Date.parse(at(60))), 2, 'and b again at 59 s');
  t.is(resubscriptions(log, Date.parse(at(10)), Date.parse(at(30))), 0, "a's first subscription in that window");
});
