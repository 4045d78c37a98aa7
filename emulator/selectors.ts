// Label and field selectors: parsed from query strings with the apiserver's grammar and errors, and matched on objects.
import { badRequest } from './errors.js';
import type { KubeObject } from './object.js';
import { labelKeyErrors, labelValueErrors } from './names.js';

export type LabelRequirement =
  | { readonly key: string; readonly op: 'exists' | '!exists' }
  | { readonly key: string; readonly op: 'in' | 'notin'; readonly values: readonly string[] }
  | { readonly key: string; readonly op: 'gt' | 'lt'; readonly value: number };

export type LabelSelector = readonly LabelRequirement[];

type Token = { kind: 'id' | '(' | ')' | ',' | '=' | '==' | '!=' | '!' | 'in' | 'notin' | '>' | '<' | 'end'; text: string };

function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const two = input.slice(i, i + 2);
    if (two === '==' || two === '!=') {
      tokens.push({ kind: two, text: two });
      i += 2;
      continue;
    }
    if (c === '(' || c === ')' || c === ',' || c === '=' || c === '!' || c === '>' || c === '<') {
      tokens.push({ kind: c, text: c });
      i++;
      continue;
    }
    let j = i;
    while (j < input.length && !' \t\n\r(),=!<>'.includes(input[j])) j++;
    const text = input.slice(i, j);
    tokens.push({ kind: text === 'in' ? 'in' : text === 'notin' ? 'notin' : 'id', text });
    i = j;
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

function parseError(message: string): Error {
  return badRequest(`unable to parse requirement: ${message}`);
}

/** Parses a labelSelector query value ("a=b,c in (d,e),!f"); an empty string selects everything. */
export function parseLabelSelector(input: string): LabelSelector {
  const tokens = tokenize(input);
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const requirements: LabelRequirement[] = [];
  if (peek().kind === 'end') return requirements;
  for (;;) {
    let requirement: LabelRequirement;
    if (peek().kind === '!') {
      next();
      const key = next();
      if (key.kind !== 'id') throw parseError(`found '${key.text}', expected: identifier`);
      checkKey(key.text);
      requirement = { key: key.text, op: '!exists' };
    } else {
      const key = next();
      if (key.kind !== 'id') throw parseError(`found '${key.text}', expected: !, identifier, or 'end of string'`);
      checkKey(key.text);
      const op = peek();
      if (op.kind === ',' || op.kind === 'end') {
        requirement = { key: key.text, op: 'exists' };
      } else {
        next();
        switch (op.kind) {
          case '=':
          case '==':
          case '!=': {
            const value = peek().kind === 'id' ? next().text : '';
            checkValue(value);
            requirement = { key: key.text, op: op.kind === '!=' ? 'notin' : 'in', values: [value] };
            break;
          }
          case 'in':
          case 'notin': {
            const open = next();
            if (open.kind !== '(') throw parseError(`found '${open.text}', expected: '('`);
            const values: string[] = [];
            for (;;) {
              const t = peek();
              if (t.kind === 'id') {
                next();
                checkValue(t.text);
                values.push(t.text);
              } else if (t.kind === ',' || t.kind === ')') {
                if (values.length === 0 || tokens[pos - 1].kind === ',') values.push('');
              } else {
                throw parseError(`found '${t.text}', expected: ',', ')' or identifier`);
              }
              const sep = next();
              if (sep.kind === ')') break;
              if (sep.kind !== ',') throw parseError(`found '${sep.text}', expected: ',' or ')'`);
            }
            requirement = { key: key.text, op: op.kind, values };
            break;
          }
          case '>':
          case '<': {
            const value = next();
            const n = Number(value.text);
            if (value.kind !== 'id' || !/^-?\d+$/.test(value.text)) {
              throw parseError(`for 'Gt', 'Lt' operators, exactly one value is required`);
            }
            requirement = { key: key.text, op: op.kind === '>' ? 'gt' : 'lt', value: n };
            break;
          }
          default:
            throw parseError(`found '${op.text}', expected: in, notin, =, ==, !=, gt, lt`);
        }
      }
    }
    requirements.push(requirement);
    const sep = next();
    if (sep.kind === 'end') break;
    if (sep.kind !== ',') throw parseError(`found '${sep.text}', expected: ',' or 'end of string'`);
  }
  return requirements;
}

function checkKey(key: string): void {
  const errors = labelKeyErrors(key);
  if (errors.length > 0) throw parseError(`<nil>: Invalid value: ${JSON.stringify(key)}: ${errors.join('; ')}`);
}

function checkValue(value: string): void {
  const errors = labelValueErrors(value);
  if (errors.length > 0) throw parseError(`<nil>: Invalid value: ${JSON.stringify(value)}: ${errors.join('; ')}`);
}

/** Builds a selector from a LabelSelector object (matchLabels, matchExpressions), as Deployments carry it. */
export function labelSelectorFromObject(selector: {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}): LabelSelector {
  const out: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) out.push({ key, op: 'in', values: [value] });
  for (const e of selector.matchExpressions ?? []) {
    const op = e.operator === 'In' ? 'in' : e.operator === 'NotIn' ? 'notin' : e.operator === 'Exists' ? 'exists' : '!exists';
    out.push(op === 'in' || op === 'notin' ? { key: e.key, op, values: e.values ?? [] } : { key: e.key, op });
  }
  return out;
}

export function labelsMatch(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const r of selector) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    const value = has ? labels![r.key] : undefined;
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!exists':
        if (has) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(value!)) return false;
        break;
      case 'notin':
        if (has && r.values.includes(value!)) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(value!)) return false;
        const n = Number(value);
        if (r.op === 'gt' ? !(n > r.value) : !(n < r.value)) return false;
        break;
      }
    }
  }
  return true;
}

export interface FieldRequirement {
  readonly field: string;
  readonly op: '=' | '!=';
  readonly value: string;
}

export type FieldSelector = readonly FieldRequirement[];

/** Parses a fieldSelector query value ("metadata.name=x,type!=y"), honouring `\` escapes. */
export function parseFieldSelector(input: string): FieldSelector {
  const out: FieldRequirement[] = [];
  if (input.trim() === '') return out;
  for (const term of splitUnescaped(input, ',')) {
    const m = /^([^=!]*?)(==|=|!=)(.*)$/s.exec(term);
    if (m === null || m[1] === '') {
      throw badRequest(`invalid selector: '${input}'; can't understand '${term}'`);
    }
    out.push({ field: m[1].trim(), op: m[2] === '!=' ? '!=' : '=', value: unescapeValue(m[3]) });
  }
  return out;
}

function splitUnescaped(input: string, sep: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    if (input[i] === '\\' && i + 1 < input.length) {
      current += input[i] + input[i + 1];
      i++;
    } else if (input[i] === sep) {
      parts.push(current);
      current = '';
    } else {
      current += input[i];
    }
  }
  parts.push(current);
  return parts;
}

function unescapeValue(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

/** The field values a kind can be selected by: metadata.name and metadata.namespace, plus the kind's own fields. */
export type FieldGetters = Readonly<Record<string, (obj: KubeObject) => string>>;

/** Checks that every field of a selector is supported by the kind; otherwise the kind's own 400 message. */
export function checkFieldSelector(selector: FieldSelector, getters: FieldGetters, style: 'known' | 'label'): void {
  for (const r of selector) {
    if (Object.hasOwn(getters, r.field)) continue;
    if (style === 'label') throw badRequest(`field label not supported: ${r.field}`);
    const known = Object.keys(getters)
      .map((k) => JSON.stringify(k))
      .join(', ');
    throw badRequest(`${JSON.stringify(r.field)} is not a known field selector: only ${known}`);
  }
}

export function fieldsMatch(selector: FieldSelector, getters: FieldGetters, obj: KubeObject): boolean {
  for (const r of selector) {
    const value = getters[r.field](obj);
    if ((value === r.value) !== (r.op === '=')) return false;
  }
  return true;
}

/** A field getter reading a dotted path of plain fields ("spec.type", "involvedObject.name"). */
export function pathGetter(path: string): (obj: KubeObject) => string {
  const parts = path.split('.');
  return (obj) => {
    let value: unknown = obj;
    for (const part of parts) {
      if (value === null || typeof value !== 'object') return '';
      value = (value as Record<string, unknown>)[part];
    }
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : String(value);
  };
}

export const metadataFieldGetters: FieldGetters = {
  'metadata.name': (obj) => obj.metadata.name ?? '',
  'metadata.namespace': (obj) => obj.metadata.namespace ?? '',
};
