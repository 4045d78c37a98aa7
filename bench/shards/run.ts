// `npm run bench -- --shards 1,2,4`: each shard count at each size on a fresh API server; the table and its JSON.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchOptions } from '../options.js';
import type { Progress } from '../progress.js';
import { runHeader } from '../results.js';
import { sizeLabel } from '../report.js';
import { prepareShardCommand } from './process.js';
import { renderShardReport, type ShardBenchResults } from './report.js';
import { runShardSession, type ShardSessionResult } from './session.js';

/** The files a `--shards` run writes, named after its profile and target. */
export function shardResultFiles(outDir: string, options: Pick<BenchOptions, 'profile' | 'target'>): { markdown: string; json: string } {
  const base = join(outDir, `shards-${options.profile.name}-${options.target}`);
  return { markdown: `${base}.md`, json: `${base}.json` };
}

/** Runs every shard count of `options.shards` at every size, writing the report after each session. */
export async function runShardBench(
  options: BenchOptions & { shards: readonly number[] },
  command: string,
  progress: Progress,
): Promise<ShardBenchResults> {
  const startedAt = new Date().toISOString();
  const logDir = mkdtempSync(join(tmpdir(), 'customapp-bench-shards-'));
  progress.log(`logs of the shard processes: ${logDir}`);
  const shardCommand = await prepareShardCommand();
  if (shardCommand.mode === 'tsx') progress.log('esbuild is missing: the shards run under tsx (about 100 MB more RSS each)');
  const sessions: ShardSessionResult[] = [];
  const plan = options.sizes.flatMap((size) => options.shards.map((shards) => ({ size, shards })));
  const snapshot = (): ShardBenchResults => ({
    ...runHeader(startedAt, command, options),
    runner: shardCommand.mode,
    sessions,
  });
  const files = shardResultFiles(options.outDir, options);
  mkdirSync(options.outDir, { recursive: true });
  try {
    for (const [index, { size, shards }] of plan.entries()) {
      sessions.push(
        await runShardSession({
          shards,
          size,
          profile: options.profile,
          target: options.target,
          command: shardCommand,
          logDir,
          progress,
          label: `[${index + 1}/${plan.length} ${shards} shard${shards === 1 ? '' : 's'} ${sizeLabel(size)}]`,
        }),
      );
      const results = snapshot();
      writeFileSync(files.json, `${JSON.stringify(results, null, 2)}\n`);
      writeFileSync(files.markdown, renderShardReport(results));
    }
  } finally {
    shardCommand.dispose();
  }
  progress.done();
  return snapshot();
}
