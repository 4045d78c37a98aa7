// Name, label and annotation rules of k8s.io/apimachinery/pkg/util/validation, with their exact messages.

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelValueFmt = `(${qualifiedNameFmt})?`;

const qualifiedName = new RegExp(`^${qualifiedNameFmt}$`);

const maxLen = (n: number) => `must be no more than ${n} characters`;

function regexError(message: string, fmt: string, examples: string[]): string {
  const ex = examples.map((e) => `'${e}'`).join(',  or ');
  return `${message} (e.g. ${ex}, regex used for validation is '${fmt}')`;
}

/**
 * A rule that checks a value's length against `maxLength` and the whole value against `fmt`, answering the errors
 * in apimachinery's order and words (the length first, then the pattern with `message` and `examples`).
 */
function patternErrors(maxLength: number, fmt: string, message: string, examples: string[]): (value: string) => string[] {
  const pattern = new RegExp(`^${fmt}$`);
  return (value) => {
    const errors: string[] = [];
    if (value.length > maxLength) errors.push(maxLen(maxLength));
    if (!pattern.test(value)) errors.push(regexError(message, fmt, examples));
    return errors;
  };
}

export const dns1123SubdomainErrors = patternErrors(
  253,
  dns1123SubdomainFmt,
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
  ['example.com'],
);

export const dns1123LabelErrors = patternErrors(
  63,
  dns1123LabelFmt,
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
  ['my-name', '123-abc'],
);

export const dns1035LabelErrors = patternErrors(
  63,
  dns1035LabelFmt,
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
  ['my-name', 'abc-123'],
);

/** ValidatePathSegmentName: what RBAC objects and a few others accept as a name. */
export function pathSegmentNameErrors(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  const errors: string[] = [];
  for (const c of ['/', '%']) if (value.includes(c)) errors.push(`may not contain '${c}'`);
  return errors;
}

/** A qualified name ("prefix/name"), the rule for label keys, annotation keys and finalizers. */
export function qualifiedNameErrors(value: string): string[] {
  const errors: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0];
  } else if (parts.length === 2) {
    const [prefix, rest] = parts;
    name = rest;
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else for (const e of dns1123SubdomainErrors(prefix)) errors.push(`prefix part ${e}`);
  } else {
    const message = regexError(
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
      qualifiedNameFmt,
      ['MyName', 'my.name', '123-abc'],
    );
    return [`${message} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (name.length > 63) errors.push(`name part ${maxLen(63)}`);
  if (!qualifiedName.test(name)) {
    errors.push(
      regexError(
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        qualifiedNameFmt,
        ['MyName', 'my.name', '123-abc'],
      ),
    );
  }
  return errors;
}

export const labelKeyErrors = qualifiedNameErrors;

export const labelValueErrors = patternErrors(
  63,
  labelValueFmt,
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
  ['MyValue', 'my_value', '12345'],
);

/** The rule each kind applies to metadata.name. */
export type NameRule = 'dns1123-subdomain' | 'dns1123-label' | 'dns1035-label' | 'path-segment';

export function nameErrors(rule: NameRule, name: string): string[] {
  switch (rule) {
    case 'dns1123-subdomain':
      return dns1123SubdomainErrors(name);
    case 'dns1123-label':
      return dns1123LabelErrors(name);
    case 'dns1035-label':
      return dns1035LabelErrors(name);
    case 'path-segment':
      return pathSegmentNameErrors(name);
  }
}

/** The 5-character random suffix of generateName, from the apiserver's alphabet (no vowels, no 0/1/3). */
export function generatedNameSuffix(random: () => number): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let out = '';
  for (let i = 0; i < 5; i++) out += alphabet[Math.floor(random() * alphabet.length)];
  return out;
}
