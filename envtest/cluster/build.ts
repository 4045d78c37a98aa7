// Everything a node cluster needs, built or found: Debian packages, envtest's binaries, the node's binaries and images.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { envtestAssets } from '../harness.js';

const execFileAsync = promisify(execFile);
const HERE = import.meta.dirname;
/** The synthesized manifests: the operator image is loaded into the node under the name they reference. */
const DIST = resolve(HERE, '../../dist');

/** An image built here, saved as a docker-archive. */
export interface BuiltImage {
  readonly name: string;
  readonly archive: string;
}

/** The binaries and images of a node cluster. */
export interface ClusterAssets {
  /** kube-apiserver, etcd and kube-controller-manager (envtest's). */
  readonly envtestDir: string;
  /** kubelet, kube-scheduler, kube-proxy, pause and the demo app. */
  readonly binDir: string;
  readonly images: { readonly pause: BuiltImage; readonly demo: BuiltImage; readonly operator: BuiltImage };
}

async function script(name: string, args: readonly string[], onProgress: (line: string) => void): Promise<string> {
  const path = resolve(HERE, name);
  const child = execFileAsync('bash', [path, ...args], { maxBuffer: 64 << 20, timeout: 30 * 60_000 });
  // Progress lines go to stderr; they are passed on as they come.
  let pending = '';
  child.child.stderr!.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) if (line.trim()) onProgress(line);
  });
  try {
    return (await child).stdout;
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim().split('\n').slice(-30).join('\n');
    throw new Error(`envtest/cluster/${name} failed: ${stderr || String(error)}`, { cause: error });
  }
}

/**
 * The image of the operator's Deployment in `dist/` (the container named `operator`), so that `kubectl apply -f dist/`
 * finds it on the node unchanged.
 */
export function operatorImageInDist(dist: string = DIST): string {
  const images = new Set<string>();
  for (const file of readdirSync(dist).filter((name) => name.endsWith('.yaml'))) {
    for (const doc of parseAllDocuments(readFileSync(join(dist, file), 'utf8'))) {
      const object = doc.toJS() as { kind?: string; spec?: { template?: { spec?: { containers?: { name: string; image: string }[] } } } };
      if (object?.kind !== 'Deployment') continue;
      for (const container of object.spec?.template?.spec?.containers ?? []) if (container.name === 'operator') images.add(container.image);
    }
  }
  if (images.size !== 1)
    throw new Error(`expected one operator image in the Deployments of ${dist}, found ${images.size}: ${[...images].join(', ')}`);
  return [...images][0]!;
}

function lastLine(output: string): string {
  const lines = output.trim().split('\n');
  return lines[lines.length - 1]!;
}

/**
 * Installs the missing Debian packages (install-deps.sh), then builds or finds envtest's binaries (envtest/build.sh),
 * the node's binaries (build-binaries.sh) and its images (build-images.sh). The first run takes minutes; later runs
 * find everything in the cache at once. `onProgress` receives the scripts' progress lines.
 */
export async function clusterAssets(onProgress: (line: string) => void = () => {}): Promise<ClusterAssets> {
  await script('install-deps.sh', [], onProgress);
  const envtestDir = await envtestAssets();
  const binDir = lastLine(await script('build-binaries.sh', [], onProgress));
  const lines = (await script('build-images.sh', [binDir, operatorImageInDist()], onProgress)).trim().split('\n');
  const images = new Map<string, BuiltImage>();
  for (const line of lines) {
    const [role, name, archive] = line.split(' ');
    if (role && name && archive) images.set(role, { name, archive });
  }
  const image = (role: string): BuiltImage => {
    const found = images.get(role);
    if (!found) throw new Error(`build-images.sh printed no "${role}" image:\n${lines.join('\n')}`);
    return found;
  };
  return { envtestDir, binDir, images: { pause: image('pause'), demo: image('demo'), operator: image('operator') } };
}
