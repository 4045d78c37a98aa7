// The client's CPU per API request: the operator's transport (undici) beside node:https, the client it replaced.
//
//   npx tsx bench/transport-cost.ts [--requests 3000] [--rounds 4]
//
// A TLS server in a process of its own answers every PUT with a 4.3 KB JSON object (a Deployment's size with its
// managedFields); this process sends `requests` PUTs of a 1.4 KB body, four at a time, through each client in turn
// (round after round, so that a change of the machine's load weighs on both), reads each answer whole and parses it,
// and prints this process's CPU per request from process.cpuUsage(). node:https runs at its floor: a keep-alive agent,
// no abort wiring, no timeout.
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:https';
import { parseArgs } from 'node:util';
import { selfSignedCertificate } from '../x509/self-signed.js';
import { forEachConcurrent } from './load.js';
import { CONFIGMAPS } from '../operator/kube/resources.js';
import { Transport } from '../operator/kube/transport.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '4' } } });
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const CONCURRENCY = 4;
const PATH = '/apis/apps/v1/namespaces/bench/deployments/app?fieldManager=customapp-operator';
const BODY = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'app', namespace: 'bench' }, spec: { pad: 'x'.repeat(1300) } };

const SERVER = `
const https = require('node:https');
const managed = { manager: 'customapp-operator', operation: 'Update', fieldsV1: { 'f:spec': { 'f:template': { 'f:metadata': {} } } } };
const answer = Buffer.from(JSON.stringify({ kind: 'Deployment', metadata: { name: 'app', managedFields: Array(8).fill(managed) }, spec: { pad: 'y'.repeat(3000) } }));
const server = https.createServer({ cert: process.env.CERT, key: process.env.KEY }, (req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }); res.end(answer); });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

const { cert, key } = selfSignedCertificate({ commonName: 'transport-cost' });
const child = spawn(process.execPath, ['-e', SERVER], {
  env: { ...process.env, CERT: cert, KEY: key },
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (data: Buffer) => resolve(Number(data.toString().trim())));
    child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
  const server = `https://127.0.0.1:${port}`;
  /** `REQUESTS` calls of `work`, `CONCURRENCY` at a time. */
  const concurrently = (work: () => Promise<void>): Promise<void> => forEachConcurrent([...Array(REQUESTS).keys()], CONCURRENCY, work);
  const agent = new Agent({ keepAlive: true, ca: cert });
  const viaNodeHttps = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const payload = Buffer.from(JSON.stringify(BODY));
      const sent = request(`${server}${PATH}`, {
        method: 'PUT',
        agent,
        headers: { accept: 'application/json', 'content-type': 'application/json', 'content-length': payload.length },
      });
      sent.once('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.once('end', () => {
          JSON.parse(Buffer.concat(chunks).toString('utf8'));
          resolve();
        });
        response.once('error', reject);
      });
      sent.once('error', reject);
      sent.end(payload);
    });
  const transport = new Transport({ server, ca: cert, authHeaders: async () => ({}) }, 'transport-cost');
  const viaTransport = async (): Promise<void> => {
    const { response, abort } = await transport.send(
      { method: 'PUT', path: PATH, verb: 'update', resource: CONFIGMAPS, body: BODY },
      30_000,
    );
    JSON.parse((await response.read()).toString('utf8'));
    abort();
  };
  const clients: [string, () => Promise<void>][] = [
    ['node:https', viaNodeHttps],
    ['the transport (undici)', viaTransport],
  ];
  for (const [, work] of clients) await concurrently(work);
  const costs = new Map<string, number[]>(clients.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [name, work] of clients) {
      const before = process.cpuUsage();
      await concurrently(work);
      const spent = process.cpuUsage(before);
      costs.get(name)!.push((spent.user + spent.system) / REQUESTS);
    }
  }
  agent.destroy();
  transport.close();
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`client CPU per request (µs), ${REQUESTS} PUTs ${CONCURRENCY} at a time, ${ROUNDS} rounds:`);
  console.log('| client | µs per request (each round) | median |\n| --- | --- | --- |');
  for (const [name, rounds] of costs)
    console.log(`| ${name} | ${rounds.map((value) => value.toFixed(0)).join(' / ')} | ${median(rounds).toFixed(0)} |`);
} finally {
  child.kill();
}
