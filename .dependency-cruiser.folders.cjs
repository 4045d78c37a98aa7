// dependency-cruiser, second pass of npm run lint: no folder imports itself back, counting code and not its tests.
/** @type {import('dependency-cruiser').IConfiguration} */

// A test beside the code imports test/support, which imports the code: that loop is how tests work, so this pass
// leaves tests and testing/ helpers out. The module rules (.dependency-cruiser.cjs) still cover them.
const { options, forbidden } = require('./.dependency-cruiser.cjs');
// The operator/ folders follow the severity of the operator/ layer rules: 'warn' until issue 12's refactor is done.
const OPERATOR_LAYER_SEVERITY = forbidden.find((rule) => rule.name === 'operator-layer-kube').severity;

module.exports = {
  forbidden: [
    {
      name: 'no-circular-folders',
      comment: 'No folder may reach itself back through the imports of its files.',
      severity: 'error',
      scope: 'folder',
      from: { pathNot: '^operator/' },
      to: { circular: true },
    },
    {
      name: 'no-circular-folders-operator',
      comment: 'No operator/ folder may reach itself back (issue 12: watch ↔ cache, controller ↔ reconcile today).',
      severity: OPERATOR_LAYER_SEVERITY,
      scope: 'folder',
      from: { path: '^operator/' },
      to: { circular: true },
    },
  ],
  options: { ...options, exclude: { path: '^dist/|\\.test\\.ts$|/testing/' } },
};
