// Orders two resourceVersions when the server makes them comparable (etcd revisions), and says so when it does not.

const DECIMAL = /^\d+$/;

/**
 * Compares two resourceVersions: negative when `a` is older, 0 when equal, positive when newer, and `undefined`
 * when they cannot be ordered.
 *
 * The API conventions call resourceVersions opaque, and clients must not parse them in general. kube-apiserver
 * backed by etcd hands out the etcd revision, a decimal integer that grows with every write in the cluster, and
 * our emulator does the same (one global counter). The dependency registry relies on that order only to drop
 * stale duplicates when two sources overlap during a switch; when either side is not a decimal integer it gets
 * `undefined` and falls back to "the last delivery wins".
 */
export function compareResourceVersions(a: string, b: string): number | undefined {
  if (!DECIMAL.test(a) || !DECIMAL.test(b)) return undefined;
  const [x, y] = [a.replace(/^0+(?=\d)/, ''), b.replace(/^0+(?=\d)/, '')];
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}
