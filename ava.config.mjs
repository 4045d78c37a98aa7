// ava's configuration: the test globs, TypeScript through tsx, and the order in which the files start.

/**
 * The files that take longest, longest first (from CI's "spanned longest" list). ava runs two files at a time on this
 * CPU-bound machine; a long file that starts last runs alone at the end while the other core idles (the benchmark's
 * end-to-end file took the run's last 3 minutes so), so these start first and the short files fill in around them.
 */
export const LONGEST_FIRST = [
  'bench/bench.test.ts',
  'test/node/rollout-governance.test.ts',
  'test/reliability/sharding.test.ts',
  'test/library/example-app.test.ts',
  'test/e2e/dependency-scenarios.test.ts',
  'test/node/operator-on-node.test.ts',
  'test/node/upgrade-in-flight.test.ts',
  'test/e2e/sharding.test.ts',
];

/** Where a file stands in {@link LONGEST_FIRST}; the rest after them. */
function rank(file) {
  const index = LONGEST_FIRST.findIndex((suffix) => file.endsWith(`/${suffix}`));
  return index < 0 ? LONGEST_FIRST.length : index;
}

export default {
  extensions: { ts: 'module' },
  nodeArguments: ['--import=tsx'],
  workerThreads: false,
  files: [
    'test/**/*.test.ts',
    'infra/**/*.test.ts',
    'operator/**/*.test.ts',
    'x509/**/*.test.ts',
    'scripts/**/*.test.ts',
    'emulator/**/*.test.ts',
    'envtest/**/*.test.ts',
    'bench/**/*.test.ts',
  ],
  timeout: '120s',
  sortTestFiles: (a, b) => rank(a) - rank(b) || a.localeCompare(b, 'en', { numeric: true }),
};
