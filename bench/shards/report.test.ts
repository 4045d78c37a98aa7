// The shard report: the RSS ratio against one shard, the failover bounds, and what a run without a figure says.
import test from 'ava';
import { shardChecks, shardTable } from './report.js';
import type { FailoverResult, ShardSessionResult } from './session.js';

const MIB = 2 ** 20;
const failover = (signal: FailoverResult['signal'], maxMs: number, missed = 0): FailoverResult => ({
  signal,
  updates: 200,
  writesMs: 800,
  stoppedShardApps: 50,
  sinceStopMs: { count: 50 - missed, p50: 20, p95: maxMs, p99: maxMs, max: maxMs, mean: maxMs / 4 },
  othersSinceWriteMs: { count: 150, p50: 15, p95: 300, p99: 400, max: 450, mean: 40 },
  missed,
});
const session = (shards: number, rss: number[], killed?: FailoverResult, graceful?: FailoverResult): ShardSessionResult => ({
  shards,
  size: 1000,
  coldStartMs: 8_000 / shards,
  converged: 1000,
  rssBytes: rss.map((each) => each * MIB),
  leaseDurationMs: 15_000,
  ...(killed ? { killed } : {}),
  ...(graceful ? { graceful } : {}),
});

test('each goal is met or missed from the figures: 4 shards against 1 by RSS, the killed bound is the Lease duration + 2 s, the graceful one 2 s', (t) => {
  const sessions = [
    session(1, [200]),
    session(2, [120, 118], failover('SIGKILL', 16_500), failover('SIGTERM', 900)),
    session(4, [80, 60, 65, 70], failover('SIGKILL', 17_500), failover('SIGTERM', 2_500, 1)),
  ];
  t.deepEqual(
    shardChecks(sessions).map((check) => [check.target, check.measured, check.met]),
    [
      ['with 4 shards each RSS ≤ 0.35× the single process (1k)', '80.0 vs 200.0 MiB = 0.4×', false],
      ["2 shards: a killed shard's objects roll again within the Lease duration + 2 s (1k)", '16.5 s (bound 17.0 s)', true],
      ["2 shards: a gracefully stopped shard's objects roll again within 2 s (1k)", '0.9 s', true],
      ["4 shards: a killed shard's objects roll again within the Lease duration + 2 s (1k)", '17.5 s (bound 17.0 s)', false],
      ["4 shards: a gracefully stopped shard's objects roll again within 2 s (1k)", '2.5 s, 1 missed', false],
    ],
  );
  const rows = shardTable(sessions).split('\n');
  t.is(rows[2], '| 1 | 1k | 8.0 | 200.0 / 200.0 | 1× | – (one shard: no one takes over) | – (one shard: no one takes over) |');
  t.is(
    rows[4],
    "| 4 | 1k | 2.0 | 80.0 / 68.8 | 0.4× | 17.5 (its 50 of 200 apps; the others' max 0.5 after their write) | 2.5 (its 50 of 200 apps; the others' max 0.5 after their write, **1 missed**) |",
  );
});

test('a run without the single shard or the failovers says the goal was not measured', (t) => {
  const checks = shardChecks([session(4, [80, 60, 65, 70])]);
  t.deepEqual(
    checks.map((check) => [check.measured, check.met]),
    [
      ['not measured', undefined],
      ['not measured', undefined],
      ['not measured', undefined],
    ],
  );
});
