// The JSONPath subset CRD printer columns use (.a.b, [0], [*], ['k'], ..x, [?(@.a.b=="v")]), evaluated to a list of results.

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'recursive'; name: string }
  | { kind: 'filter'; path: string[]; op?: '==' | '!=' | '<' | '>' | '<=' | '>='; value?: unknown };

export class JsonPathError extends Error {}

/** Parses a path like `.status.conditions[?(@.type=="Ready")].status` (the braces of `{.x}` are optional). */
export function parseJsonPath(expression: string): Step[] {
  let path = expression.trim();
  if (path.startsWith('{') && path.endsWith('}')) path = path.slice(1, -1);
  if (path.startsWith('$')) path = path.slice(1);
  const steps: Step[] = [];
  let i = 0;
  const ident = () => {
    const m = /^[^.[\]\s]+/.exec(path.slice(i));
    if (m === null) throw new JsonPathError(`unexpected ${JSON.stringify(path.slice(i))} in ${JSON.stringify(expression)}`);
    i += m[0].length;
    return m[0];
  };
  while (i < path.length) {
    if (path.startsWith('..', i)) {
      i += 2;
      steps.push({ kind: 'recursive', name: ident() });
    } else if (path[i] === '.') {
      i++;
      if (i < path.length && path[i] !== '[' && path[i] !== '.') steps.push({ kind: 'field', name: ident() });
    } else if (path[i] === '[') {
      const end = matchingBracket(path, i);
      const inner = path.slice(i + 1, end).trim();
      i = end + 1;
      if (inner === '*') steps.push({ kind: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else if (/^'.*'$|^".*"$/.test(inner)) steps.push({ kind: 'field', name: inner.slice(1, -1) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) steps.push(parseFilter(inner.slice(2, -1), expression));
      else throw new JsonPathError(`unsupported subscript [${inner}] in ${JSON.stringify(expression)}`);
    } else {
      steps.push({ kind: 'field', name: ident() });
    }
  }
  return steps;
}

function matchingBracket(path: string, open: number): number {
  let depth = 0;
  let quote: string | undefined;
  for (let j = open; j < path.length; j++) {
    const c = path[j];
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return j;
  }
  throw new JsonPathError(`unclosed [ in ${JSON.stringify(path)}`);
}

function parseFilter(filter: string, expression: string): Step {
  const m = /^@((?:\.[^.\s=!<>]+)+)\s*(?:(==|!=|<=|>=|<|>)\s*(.+))?$/.exec(filter.trim());
  if (m === null) throw new JsonPathError(`unsupported filter ${JSON.stringify(filter)} in ${JSON.stringify(expression)}`);
  const path = m[1].slice(1).split('.');
  if (m[2] === undefined) return { kind: 'filter', path };
  const raw = m[3].trim();
  let value: unknown;
  if (/^'.*'$|^".*"$/.test(raw)) value = raw.slice(1, -1);
  else if (raw === 'true' || raw === 'false') value = raw === 'true';
  else if (!Number.isNaN(Number(raw))) value = Number(raw);
  else throw new JsonPathError(`unsupported filter value ${raw} in ${JSON.stringify(expression)}`);
  return { kind: 'filter', path, op: m[2] as '==', value };
}

function at(value: unknown, path: readonly string[]): unknown {
  let v = value;
  for (const p of path) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

function compare(a: unknown, op: string, b: unknown): boolean {
  switch (op) {
    case '==':
      return a === b;
    case '!=':
      return a !== b;
    default: {
      if (typeof a !== 'number' || typeof b !== 'number') return false;
      return op === '<' ? a < b : op === '>' ? a > b : op === '<=' ? a <= b : a >= b;
    }
  }
}

function collectRecursive(value: unknown, name: string, out: unknown[]): void {
  if (Array.isArray(value)) {
    for (const v of value) collectRecursive(v, name, out);
  } else if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (Object.hasOwn(o, name)) out.push(o[name]);
    for (const v of Object.values(o)) collectRecursive(v, name, out);
  }
}

/** Every value the path selects in `root`, in document order. */
export function evaluateJsonPath(steps: readonly Step[], root: unknown): unknown[] {
  let current: unknown[] = [root];
  for (const step of steps) {
    const next: unknown[] = [];
    for (const value of current) {
      switch (step.kind) {
        case 'field':
          if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, step.name)) {
            next.push((value as Record<string, unknown>)[step.name]);
          }
          break;
        case 'index':
          if (Array.isArray(value)) {
            const i = step.index < 0 ? value.length + step.index : step.index;
            if (i >= 0 && i < value.length) next.push(value[i]);
          }
          break;
        case 'all':
          if (Array.isArray(value)) next.push(...value);
          else if (value !== null && typeof value === 'object') next.push(...Object.values(value));
          break;
        case 'recursive':
          collectRecursive(value, step.name, next);
          break;
        case 'filter':
          if (Array.isArray(value)) {
            for (const item of value) {
              const v = at(item, step.path);
              if (step.op === undefined ? v !== undefined : compare(v, step.op, step.value)) next.push(item);
            }
          }
          break;
      }
    }
    current = next;
  }
  return current;
}
