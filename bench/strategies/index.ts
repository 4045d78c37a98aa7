// The strategy switch: a strategy name → the DependencySource the shared operator runs with.
import { NaiveGetSource } from './naive-get.js';
import { OursSource } from './ours.js';
import { PerObjectSource } from './per-object.js';
import { StaticIndexedSource } from './static-indexed.js';
import { StaticListAllSource } from './static-list-all.js';
import { STRATEGY_NAMES, type BenchSource, type StrategyContext, type StrategyName } from './strategy.js';

export { STRATEGY_NAMES, type BenchSource, type StrategyContext, type StrategyName };

const FACTORIES: Readonly<Record<StrategyName, (context: StrategyContext) => BenchSource>> = {
  'naive-get': (context) => new NaiveGetSource(context),
  'static-list-all': (context) => new StaticListAllSource(context),
  'static-indexed': (context) => new StaticIndexedSource(context),
  'per-object': (context) => new PerObjectSource(context),
  ours: (context) => new OursSource(context),
};

/** True for the name of a TypeScript strategy. */
export function isStrategyName(name: string): name is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(name);
}

/** Builds the named strategy's source (static strategies start their ConfigMap watch at once). Throws on an unknown name. */
export function createSource(name: string, context: StrategyContext): BenchSource {
  if (!isStrategyName(name)) throw new Error(`unknown strategy "${name}"; expected one of ${STRATEGY_NAMES.join(', ')}`);
  return FACTORIES[name](context);
}
