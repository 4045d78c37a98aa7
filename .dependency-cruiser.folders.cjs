// dependency-cruiser, second pass of npm run lint: no folder imports itself back, counting code and not its tests.
/** @type {import('dependency-cruiser').IConfiguration} */

// A test beside the code imports test/support, which imports the code: that loop is how tests work, so this pass
// leaves tests, testing/ helpers and the emulator's test support (emulator/test/) out. The module rules (.dependency-cruiser.cjs) still cover them.
const { options } = require('./.dependency-cruiser.cjs');

module.exports = {
  forbidden: [
    {
      name: 'no-circular-folders',
      comment: 'No folder may reach itself back through the imports of its files.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
  ],
  options: { ...options, exclude: { path: '^dist/|\\.test\\.ts$|/testing/|^emulator/test/' } },
};
