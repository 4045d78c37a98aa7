// The slot reaper of `npm run cluster` (envtest/node/reaper.sh) as acquireSlot drives it when it clears a killed run's
// leftovers: told to tear down (SIGUSR1) the moment it says "ready", it must do so, not die of the signal.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import test from 'ava';
import { MAX_SLOTS } from '../../envtest/node/addresses.js';
import { SLOTS_DIR } from '../../envtest/node/slot.js';
import { nodeTest } from './node-helpers.js';

const REAPER = resolve(import.meta.dirname, '../../envtest/node/reaper.sh');
/** Past every slot a cluster takes, so that no run of another test file waits on it or finds it held. */
const SLOT = MAX_SLOTS + 3;
const ROUNDS = 20;

/** One reaper of SLOT, sent SIGUSR1 as soon as it prints "ready"; resolves with how it exited and what it printed. */
function reapAtOnce(): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((done) => {
    const reaper = spawn('bash', [REAPER, String(SLOT), String(process.pid)], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const read = (chunk: Buffer): void => {
      output += chunk.toString();
      if (/^ready$/m.test(output) && reaper.exitCode === null) reaper.kill('SIGUSR1');
    };
    reaper.stdout.on('data', read);
    reaper.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    reaper.once('exit', (code, signal) => done({ code, signal, output }));
  });
}

nodeTest(test, `a reaper told to tear down the moment it is ready does so and unlocks its slot, ${ROUNDS} times in a row`, async (t) => {
  for (let round = 1; round <= ROUNDS; round++) {
    const { code, signal, output } = await reapAtOnce();
    t.deepEqual({ code, signal }, { code: 0, signal: null }, `round ${round}: ${output}`);
    t.false(existsSync(join(SLOTS_DIR, `slot-${SLOT}.lock`)), `round ${round}: the slot's lock is removed`);
  }
});
