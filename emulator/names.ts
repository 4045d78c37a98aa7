// Name, label and annotation rules of k8s.io/apimachinery/pkg/util/validation, with their exact messages.

const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const dns1035LabelFmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const labelValueFmt = `(${qualifiedNameFmt})?`;

const dns1123Label = new RegExp(`^${dns1123LabelFmt}$`);
const dns1123Subdomain = new RegExp(`^${dns1123SubdomainFmt}$`);
const dns1035Label = new RegExp(`^${dns1035LabelFmt}$`);
const qualifiedName = new RegExp(`^${qualifiedNameFmt}$`);
const labelValue = new RegExp(`^${labelValueFmt}$`);

const maxLen = (n: number) => `must be no more than ${n} characters`;

function regexError(message: string, fmt: string, examples: string[]): string {
  const ex = examples.map((e) => `'${e}'`).join(',  or ');
  return `${message} (e.g. ${ex}, regex used for validation is '${fmt}')`;
}

export function dns1123SubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 253) errors.push(maxLen(253));
  if (!dns1123Subdomain.test(value)) {
    errors.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        dns1123SubdomainFmt,
        ['example.com'],
      ),
    );
  }
  return errors;
}

export function dns1123LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLen(63));
  if (!dns1123Label.test(value)) {
    errors.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        dns1123LabelFmt,
        ['my-name', '123-abc'],
      ),
    );
  }
  return errors;
}

export function dns1035LabelErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLen(63));
  if (!dns1035Label.test(value)) {
    errors.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        dns1035LabelFmt,
        ['my-name', 'abc-123'],
      ),
    );
  }
  return errors;
}

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

export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push(maxLen(63));
  if (!labelValue.test(value)) {
    errors.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        labelValueFmt,
        ['MyValue', 'my_value', '12345'],
      ),
    );
  }
  return errors;
}

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
