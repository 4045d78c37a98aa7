// dependency-cruiser rules (npm run lint): which folder may import which, so that a back-edge fails CI.
/** @type {import('dependency-cruiser').IConfiguration} */

// Test code: tests beside the code, and the helpers that only tests import. It may reach test/support.
const TEST_CODE = '\\.test\\.ts$|/testing/';

// The test helpers every test may import, the emulator's included: leaves that import nothing of ours.
const TEST_SUPPORT_LEAVES = '^test/support/(eventually|json-lines)\\.ts$';

// The operator's layers, lowest first. Each layer may import only itself and the layers in its `mayImport`:
// kube ← watch ← cache ← queue ← controller, with dependencies/ (the dependency registry) on watch/ and cache/, the other
// generic pieces (events, leader, http) on kube alone, shard/ (the ring and a replica's share) on leader/ and kube/. Then what both domains share, on the generic layers alone:
// governance/ (the rollout budget and flap breakers, the rollout cause and progress) and podtemplate/ (the references
// of a pod template, the keyed hashes it carries). Then the two domains, neither importing the other: the CustomApp's,
// customapp/ (the type, its labels, triggers and indexes) ← reconcile/ (the business logic), and workload/ (existing
// Deployments, StatefulSets and DaemonSets that opt in by annotation). manager/ builds, serves and runs the whole. Files that
// no layer names (operator.ts, main.ts, embedded.ts, flags.ts, kubeconfig.ts) are the top: they may import everything.
const GENERIC_LAYERS = ['controller', 'queue', 'cache', 'watch', 'kube', 'dependencies', 'events', 'leader', 'shard', 'http', 'log'];
const LAYERS = [
  { name: 'log', path: '^operator/log(-pretty)?\\.ts$', mayImport: [] },
  { name: 'kube', path: '^operator/kube/', mayImport: ['log'] },
  { name: 'watch', path: '^operator/watch/', mayImport: ['kube', 'log'] },
  { name: 'cache', path: '^operator/cache/', mayImport: ['watch', 'kube', 'log'] },
  { name: 'queue', path: '^operator/queue/', mayImport: ['cache', 'watch', 'kube', 'log'] },
  { name: 'controller', path: '^operator/controller/', mayImport: ['queue', 'cache', 'watch', 'kube', 'log'] },
  { name: 'dependencies', path: '^operator/dependencies/', mayImport: ['cache', 'watch', 'kube', 'log'] },
  { name: 'events', path: '^operator/events/', mayImport: ['kube', 'log'] },
  { name: 'leader', path: '^operator/leader/', mayImport: ['kube', 'log'] },
  { name: 'shard', path: '^operator/shard/', mayImport: ['leader', 'kube', 'log'] },
  { name: 'http', path: '^operator/http/', mayImport: ['kube', 'log'] },
  { name: 'governance', path: '^operator/governance/', mayImport: GENERIC_LAYERS },
  { name: 'podtemplate', path: '^operator/podtemplate/', mayImport: GENERIC_LAYERS },
  { name: 'customapp', path: '^operator/customapp/', mayImport: GENERIC_LAYERS },
  { name: 'reconcile', path: '^operator/reconcile/', mayImport: ['governance', 'podtemplate', 'customapp', ...GENERIC_LAYERS] },
  { name: 'workload', path: '^operator/workload/', mayImport: ['governance', 'podtemplate', ...GENERIC_LAYERS] },
  {
    name: 'manager',
    path: '^operator/manager/',
    mayImport: ['reconcile', 'customapp', 'workload', 'governance', 'podtemplate', ...GENERIC_LAYERS],
  },
];

// The generic machinery never imports the CustomApp domain.
const GENERIC = `^operator/(${GENERIC_LAYERS.filter((name) => name !== 'log').join('|')})/|^operator/log(-pretty)?\\.ts$`;
const CUSTOMAPP_DOMAIN = '^operator/(customapp|governance|podtemplate|reconcile|workload|manager)/|^api/';

// A back-edge between the operator's layers fails `npm run lint`.
const OPERATOR_LAYER_SEVERITY = 'error';

const pathOf = (name) => LAYERS.find((layer) => layer.name === name).path;

const operatorLayerRules = LAYERS.map((layer) => ({
  name: `operator-layer-${layer.name}`,
  comment: `operator/ layer "${layer.name}" may import only ${[layer.name, ...layer.mayImport].join(', ')}`,
  severity: OPERATOR_LAYER_SEVERITY,
  from: { path: layer.path, pathNot: TEST_CODE },
  to: { path: '^operator/', pathNot: [layer.path, ...layer.mayImport.map(pathOf), TEST_CODE] },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module may reach itself through its imports.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'infra-standalone',
      comment: 'infra/ (the cdk8s code) imports neither the operator, the emulator nor the benchmark; the API it shares is in api/.',
      severity: 'error',
      from: { path: '^infra/' },
      to: { path: '^(operator|emulator|bench|envtest|x509)/' },
    },
    {
      name: 'api-standalone',
      comment: 'api/ (the CustomApp and workload API: names, schema, status types) imports nothing of ours but the generated imports/.',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^(operator|emulator|infra|envtest|test|bench)/' },
    },
    {
      name: 'operator-not-to-emulator',
      comment: 'Only operator/embedded.ts (the embedded default) starts the emulator.',
      severity: 'error',
      from: { path: '^operator/', pathNot: '^operator/embedded\\.ts$' },
      to: { path: '^emulator/' },
    },
    {
      name: 'emulator-standalone',
      comment:
        'The emulator is a Kubernetes API server: it knows neither the operator, the CustomApp nor the benchmark. It shares with the operator only the leaf x509/ (certificates, importing nothing).',
      severity: 'error',
      from: { path: '^emulator/' },
      to: { path: '^(operator|infra|bench)/' },
    },
    {
      name: 'envtest-standalone',
      comment: 'envtest/ builds and starts a real API server; it imports nothing of ours.',
      severity: 'error',
      from: { path: '^envtest/' },
      to: { path: '^(operator|emulator|infra|api|test|bench)/' },
    },
    {
      name: 'x509-standalone',
      comment: 'x509/ builds certificates with node:crypto for the operator and the emulator; it imports nothing of ours.',
      severity: 'error',
      from: { path: '^x509/' },
      to: { path: '^(operator|emulator|infra|envtest|test|bench|imports|scripts)/' },
    },
    {
      name: 'runtime-not-to-envtest',
      comment: 'What ships (operator/, infra/, the emulator) never imports envtest; tests and emulator/scripts may.',
      severity: 'error',
      from: { path: '^(operator|infra|emulator)/', pathNot: `${TEST_CODE}|^emulator/(test|scripts)/` },
      to: { path: '^envtest/' },
    },
    {
      name: 'only-tests-to-test',
      comment: "test/ is imported only by test/, bench/, tests beside the code, their testing/ helpers and the emulator's test support.",
      severity: 'error',
      from: { pathNot: `^(test|bench|emulator/test)/|${TEST_CODE}` },
      to: { path: '^test/' },
    },
    {
      name: 'test-support-leaves',
      comment: 'The polling helper and the JSON-lines reader import nothing of ours, so that any test may use them.',
      severity: 'error',
      from: { path: TEST_SUPPORT_LEAVES },
      to: { path: '^(operator|emulator|infra|envtest|test|bench|imports)/', pathNot: TEST_SUPPORT_LEAVES },
    },
    {
      name: 'runtime-not-to-tests',
      comment: 'Code that is not a test never imports a test file or a testing/ helper.',
      severity: 'error',
      from: { pathNot: `^(test|bench)/|${TEST_CODE}` },
      to: { path: TEST_CODE },
    },
    {
      name: 'generic-not-to-customapp',
      comment:
        'The generic machinery (kube, watch, cache, queue, controller, dependencies, events, leader, http) never imports a domain (the CustomApp, the workloads) nor what the domains share.',
      severity: OPERATOR_LAYER_SEVERITY,
      from: { path: GENERIC, pathNot: TEST_CODE },
      to: { path: CUSTOMAPP_DOMAIN },
    },
    ...operatorLayerRules,
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-non-package-json',
      comment: 'Every npm package imported is declared in package.json.',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'runtime-not-to-dev-dep',
      comment: 'The operator and the emulator it embeds run on dependencies only (the image prunes devDependencies).',
      severity: 'error',
      from: { path: '^(operator|emulator)/', pathNot: `${TEST_CODE}|^emulator/(test|scripts|bench)/` },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-deprecated-core',
      comment: 'No deprecated node core module.',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['core'], path: '^(punycode|domain|constants|sys|_linklist|_stream_wrap)$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.json'],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
    cache: false,
  },
};
