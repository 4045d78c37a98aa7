// One benchmark session: a fresh API server, the load, one participant's operator, and its phases in order.
import { recordingLine } from './apiserver-profile.js';
import { isWorkloadParticipant } from './options.js';
import { coldStart, idle, memoryAfterSync, referencedUpdates, restart, sharedUpdates, specUpdates, unrelatedUpdates } from './phases.js';
import type { SessionResult } from './results.js';
import { referencedLine, restartLine, runPhases, Session, type SessionOptions } from './session-state.js';
import { totalRequests } from './stats.js';
import { runWorkloadSession } from './workloads/session.js';

export type { SessionOptions };

/** Runs one participant at one size on a fresh API server; a failure ends the session with the phases done so far. */
export async function runSession(options: SessionOptions): Promise<SessionResult> {
  if (isWorkloadParticipant(options.participant)) return runWorkloadSession(options);
  const session = new Session(options);
  const result = await runPhases(options, session, async (result, log) => {
    const apiserverProfile = session.recordApiserverProfile('cold-start');
    try {
      result.coldStart = await coldStart(session);
    } finally {
      const windows = await apiserverProfile?.stop();
      if (windows) log(recordingLine(windows));
    }
    await session.cutProfile('cold-start');
    log(
      `cold start: ${result.coldStart.converged}/${options.size} converged${result.coldStart.convergedMs === undefined ? '' : ` in ${(result.coldStart.convergedMs / 1000).toFixed(1)} s`}`,
    );
    result.afterSync = await memoryAfterSync(session);
    if (result.coldStart.converged < options.size) {
      // The later phases would measure a backlog, not the strategy: the session ends here, and says why.
      throw new Error(
        `did not converge from cold within ${(result.coldStart.durationMs / 1000).toFixed(0)} s (${result.coldStart.converged}/${options.size} Deployments carry their ConfigMap's hash); the later phases were not run`,
      );
    }
    if (options.coldStartOnly) return;
    // The cold start's own trailing reconciles (its status patches come back as update events) end before the first
    // measured update: one of them would GET the new content, and naive-get would look as if it saw the change.
    await new Promise((done) => setTimeout(done, 2_000));
    await session.cutProfile();
    result.referenced = await referencedUpdates(session);
    log(referencedLine(result.referenced));
    await session.cutProfile('referenced-updates');
    result.unrelated = await unrelatedUpdates(session);
    log(`unrelated updates: ${result.unrelated.reconciles} reconciles, ${totalRequests(result.unrelated.requests)} requests`);
    result.spec = await specUpdates(session);
    log(`spec updates: p99 ${result.spec.latencyMs?.p99.toFixed(1) ?? '–'} ms, missed ${result.spec.missed}/${result.spec.expected}`);
    result.shared = await sharedUpdates(session);
    log(`shared updates after handoff: missed ${result.shared.missed}/${result.shared.expected}`);
    await session.cutProfile('other-updates');
    result.idle = await idle(session);
    log(`idle: ${result.idle.renewals} renewals over ${result.idle.watchStreams} watch streams`);
    result.restart = await restart(session);
    await session.cutProfile('restart');
    log(restartLine(result.restart));
    Object.assign(session.notes, (await session.stats()).notes ?? {});
  });
  result.missedTotal = [result.referenced, result.spec, result.shared].reduce((sum, phase) => sum + (phase?.missed ?? 0), 0);
  return result;
}
