// Command line: `npm run emulator -- --port <n> --kubeconfig-out <file>` runs the emulator until SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { startEmulator } from './index.js';

const usage = `usage: npm run emulator -- [--port <n>] [--host <addr>] [--kubeconfig-out <file>]
                            [--history-window <events>] [--bookmark-interval-ms <ms>] [--log-level <level>]
                            [--deployment-ready-after-ms <ms>|off]   simulated Deployment status (default 1000)`;

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'kubeconfig-out': { type: 'string' },
    'history-window': { type: 'string' },
    'bookmark-interval-ms': { type: 'string' },
    'log-level': { type: 'string', default: 'info' },
    'deployment-ready-after-ms': { type: 'string', default: '1000' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}

const readyAfter = values['deployment-ready-after-ms'];
if (readyAfter !== 'off' && !/^\d+$/.test(readyAfter)) {
  console.error(`--deployment-ready-after-ms "${readyAfter}" is neither a number of milliseconds nor "off"\n${usage}`);
  process.exit(2);
}
const logger = pino({ level: values['log-level'] }, pino.destination(2));
const emulator = await startEmulator({
  port: Number(values.port),
  host: values.host,
  historyWindow: values['history-window'] === undefined ? undefined : Number(values['history-window']),
  bookmarkIntervalMs: values['bookmark-interval-ms'] === undefined ? undefined : Number(values['bookmark-interval-ms']),
  logger,
  simulateDeploymentStatus: readyAfter === 'off' ? false : { readyAfterMs: Number(readyAfter) },
});
if (values['kubeconfig-out'] !== undefined) await emulator.writeAdminKubeconfig(values['kubeconfig-out']);
console.log(emulator.url);

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'emulator stopping');
  emulator.close().then(
    () => process.exit(0),
    (err: unknown) => {
      logger.error({ err }, 'emulator close failed');
      process.exit(1);
    },
  );
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
