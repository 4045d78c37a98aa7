// Preloaded into an operator process (`--import`): on SIGUSR2 it forces GC and reports heap and live handles to a file.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { PROBE_DIR_ENV, type ProbeReport, type ProbeRequest } from './probe-protocol.js';

/** Installs the SIGUSR2 handler when the process was started with a probe directory. */
function installProbe(dir: string): void {
  const gc = (globalThis as { gc?: (options?: { type: string; execution: string }) => void }).gc;
  // A listener on a signal the operator never uses: it starts no timer and does not keep the process alive.
  process.on('SIGUSR2', () => {
    const request = JSON.parse(readFileSync(join(dir, 'request.json'), 'utf8')) as ProbeRequest;
    // Several full collections: weak references and finalizers need more than one round to let go.
    for (let round = 0; round < 4; round += 1) gc?.();
    const report: ProbeReport = {
      id: request.id,
      memory: process.memoryUsage(),
      gcForced: gc !== undefined,
      resources: process.getActiveResourcesInfo(),
      heapSnapshotPath: request.heapSnapshotPath ? writeHeapSnapshot(request.heapSnapshotPath) : undefined,
    };
    const path = join(dir, `report-${request.id}.json`);
    writeFileSync(`${path}.tmp`, JSON.stringify(report));
    renameSync(`${path}.tmp`, path);
  });
}

// A preload has no caller to hand it options: reading the environment when it is imported is its whole interface.
const probeDir = process.env[PROBE_DIR_ENV];
if (probeDir) installProbe(probeDir);
