// Everything a node cluster needs, built or found: Debian packages, envtest's binaries, the node's binaries and images.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

async function script(
  name: string,
  args: readonly string[],
  onProgress: (line: string) => void,
  env: Readonly<Record<string, string>> = {},
): Promise<string> {
  const path = resolve(HERE, name);
  const child = execFileAsync('bash', [path, ...args], { maxBuffer: 64 << 20, timeout: 30 * 60_000, env: { ...process.env, ...env } });
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
    throw new Error(`envtest/node/${name} failed: ${stderr || String(error)}`, { cause: error });
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

/** The operator image of another commit, and that commit's tree (its dist/ is the install that image shipped with). */
export interface CommitImage extends BuiltImage {
  /** The full commit id the ref named. */
  readonly commit: string;
  /** The commit's files (`git archive`), for its dist/; removed by {@link CommitImage.dispose}. */
  readonly tree: string;
  dispose(): void;
}

/**
 * Builds (or finds in the cache) the operator image of the commit `ref` names, with the same recipe as this tree's
 * (build-images.sh on that commit's files: its Dockerfile, package-lock.json, operator/ and dist/), named
 * `<dist's image repository>:git-<commit>` so that it sits in a node beside this tree's image. The archive is cached by
 * the commit's files, so a second call costs a `git archive`.
 */
export async function operatorImageAt(ref: string, onProgress: (line: string) => void = () => {}): Promise<CommitImage> {
  const repo = resolve(HERE, '../..');
  const git = async (args: readonly string[]): Promise<string> => {
    try {
      return (await execFileAsync('git', ['-C', repo, ...args], { maxBuffer: 256 << 20, encoding: 'buffer' })).stdout.toString();
    } catch (error) {
      throw new Error(`git ${args.join(' ')}: ${String((error as { stderr?: Buffer }).stderr ?? error).trim()}`, { cause: error });
    }
  };
  const commit = (await git(['rev-parse', '--verify', `${ref}^{commit}`])).trim();
  const tree = mkdtempSync(join(tmpdir(), `customapp-operator-${commit.slice(0, 12)}-`));
  const dispose = (): void => rmSync(tree, { recursive: true, force: true });
  try {
    await execFileAsync('bash', ['-c', 'git -C "$0" archive --format=tar "$1" | tar -x -C "$2"', repo, commit, tree]);
    const binDir = lastLine(await script('build-binaries.sh', [], onProgress));
    const name = `${operatorImageInDist().replace(/:[^:/]+$/, '')}:git-${commit.slice(0, 12)}`;
    const output = await script('build-images.sh', [binDir, name], onProgress, {
      CUSTOMAPP_OPERATOR_SOURCE: tree,
      CUSTOMAPP_OPERATOR_ROLE: `commit-${commit.slice(0, 12)}`,
    });
    const line = output.split('\n').find((each) => each.startsWith('operator '));
    if (!line) throw new Error(`build-images.sh printed no operator image for ${ref} (${commit}):\n${output}`);
    return { name, archive: line.split(' ')[2]!, commit, tree, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}
