// The sharded relist bound's count: the scope versions a shard's log shows in a window, once each.
import test from 'ava';
import { scopeChanges } from './scope-changes.js';

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
