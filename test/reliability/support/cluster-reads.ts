// The shared cluster reads (test/support/cluster-reads.ts), under the path that test/e2e/customapp-scale.test.ts imports.
export { conditionOf, conditionReached, NamespaceReads, podAnnotation } from '../../support/cluster-reads.js';
