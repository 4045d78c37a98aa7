// Tests of kubeconfig resolution: the flag, then KUBECONFIG, then in-cluster, then ~/.kube/config, else none.
import test from 'ava';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveKubeConfig } from './kubeconfig.js';

const kubeconfig = (server: string): string =>
  [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: c',
    '  cluster:',
    `    server: ${server}`,
    'users:',
    '- name: u',
    '  user:',
    '    token: t',
    'contexts:',
    '- name: x',
    '  context:',
    '    cluster: c',
    '    user: u',
    'current-context: x',
    '',
  ].join('\n');

function sandbox(t: { teardown: (fn: () => void) => void }): { dir: string; file: (name: string, server: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    file: (name, server) => {
      const path = join(dir, name);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, kubeconfig(server));
      return path;
    },
  };
}

test('--kubeconfig wins over KUBECONFIG and ~/.kube/config', (t) => {
  const { dir, file } = sandbox(t);
  const flag = file('flag.yaml', 'https://flag:6443');
  const env = file('env.yaml', 'https://env:6443');
  file('.kube/config', 'https://home:6443');
  const resolved = resolveKubeConfig({ flag, env: { KUBECONFIG: env }, home: dir });
  t.is(resolved?.source, 'flag');
  t.is(resolved?.kubeConfig.getCurrentCluster()?.server, 'https://flag:6443');
});

test('KUBECONFIG comes next, taking the first existing file of its list', (t) => {
  const { dir, file } = sandbox(t);
  const env = file('env.yaml', 'https://env:6443');
  file('.kube/config', 'https://home:6443');
  const resolved = resolveKubeConfig({ env: { KUBECONFIG: `${join(dir, 'missing.yaml')}:${env}` }, home: dir });
  t.like(resolved, { source: 'env', path: env });
});

test('in-cluster configuration comes before ~/.kube/config', (t) => {
  const { dir, file } = sandbox(t);
  file('.kube/config', 'https://home:6443');
  const token = join(dir, 'token');
  writeFileSync(token, 'x');
  const env = { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = env.KUBERNETES_SERVICE_HOST;
  process.env.KUBERNETES_SERVICE_PORT = env.KUBERNETES_SERVICE_PORT;
  t.teardown(() => {
    if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
    else process.env.KUBERNETES_SERVICE_HOST = saved.host;
    if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
    else process.env.KUBERNETES_SERVICE_PORT = saved.port;
  });
  const resolved = resolveKubeConfig({ env, home: dir, serviceAccountTokenPath: token });
  t.is(resolved?.source, 'in-cluster');
  t.is(resolved?.kubeConfig.getCurrentCluster()?.server, 'https://10.0.0.1:443');
});

test('~/.kube/config is the last resort', (t) => {
  const { dir, file } = sandbox(t);
  const home = file('.kube/config', 'https://home:6443');
  t.like(resolveKubeConfig({ env: {}, home: dir }), { source: 'home', path: home });
});

test('with none of them there is no kubeconfig, which means the embedded emulator', (t) => {
  const { dir } = sandbox(t);
  t.is(
    resolveKubeConfig({ env: { KUBECONFIG: join(dir, 'missing') }, home: dir, serviceAccountTokenPath: join(dir, 'no-token') }),
    undefined,
  );
});

test('a --kubeconfig that does not exist, or does not parse, is an error naming the file', (t) => {
  const { dir } = sandbox(t);
  t.throws(() => resolveKubeConfig({ flag: join(dir, 'nope.yaml'), env: {}, home: dir }), {
    message: /--kubeconfig: ".*nope\.yaml" does not exist/,
  });
  const broken = join(dir, 'broken.yaml');
  writeFileSync(broken, ': not yaml : [');
  t.throws(() => resolveKubeConfig({ flag: broken, env: {}, home: dir }), {
    message: /kubeconfig ".*broken\.yaml" \(from --kubeconfig\) cannot be loaded/,
  });
});
