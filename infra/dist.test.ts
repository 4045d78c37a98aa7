// dist/, dist-helm/ and imports/ are generated: these tests fail when one differs from a fresh generation.
import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { buildApps } from './app.js';
import { HELM_CHART_DIR } from './helm-chart.js';
import { writeHelmChart } from './scripts/helm.js';
import { generateImports } from './scripts/import.js';

const root = resolve(import.meta.dirname, '..');

function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, 'utf8'));
    }
  };
  walk(dir);
  return files;
}

function withTempDir<T>(prefix: string, run: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    return run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('dist/ is exactly what `npm run synth` generates (run it and commit when this fails)', (t) => {
  withTempDir('customapp-synth-', (dir) => {
    for (const app of buildApps(dir)) app.synth();
    const fresh = filesUnder(dir);
    const committed = filesUnder(join(root, 'dist'));
    t.deepEqual([...committed.keys()].sort(), [...fresh.keys()].sort());
    for (const [file, content] of fresh) t.is(committed.get(file), content, `dist/${file} is stale`);
  });
});

test('dist-helm/ is exactly what `npm run synth` generates (run it and commit when this fails)', (t) => {
  withTempDir('customapp-helm-', (dir) => {
    writeHelmChart(dir);
    const fresh = filesUnder(dir);
    const committed = filesUnder(join(root, HELM_CHART_DIR));
    t.deepEqual([...committed.keys()].sort(), [...fresh.keys()].sort());
    for (const [file, content] of fresh) t.is(committed.get(file), content, `${HELM_CHART_DIR}/${file} is stale`);
  });
});

test('imports/ is exactly what `npm run import` generates (run it and commit when this fails)', (t) => {
  const config = readFileSync(join(root, 'cdk8s.yaml'), 'utf8');
  withTempDir('customapp-import-', (dir) => {
    generateImports(dir);
    t.is(readFileSync(join(root, 'cdk8s.yaml'), 'utf8'), config, 'cdk8s import must not touch cdk8s.yaml');
    t.regex(config, /imports:\n {2}- dist\/customapp-crd\.k8s\.yaml\n$/);
    const fresh = filesUnder(dir);
    const committed = filesUnder(join(root, 'imports'));
    t.deepEqual([...committed.keys()].sort(), [...fresh.keys()].sort());
    for (const [file, content] of fresh) t.is(committed.get(file), content, `imports/${file} is stale`);
  });
});

test('every document in dist/ parses as YAML with apiVersion, kind and metadata.name', (t) => {
  const files = filesUnder(join(root, 'dist'));
  t.true(files.size >= 3);
  let documents = 0;
  for (const [file, content] of files) {
    t.regex(file, /\.k8s\.yaml$/);
    for (const document of parseAllDocuments(content)) {
      t.deepEqual(document.errors, [], file);
      const object = document.toJS() as Record<string, any>;
      t.regex(String(object.apiVersion), /^([a-z0-9.-]+\/)?v\d+((alpha|beta)\d+)?$/, `${file}: apiVersion`);
      t.regex(String(object.kind), /^[A-Z][A-Za-z]+$/, `${file}: kind`);
      t.regex(String(object.metadata?.name), /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, `${file}: metadata.name`);
      documents++;
    }
  }
  t.true(documents >= 8, `${documents} documents`);
});
