// Custom resource validation against a structural schema, with kube-openapi's messages.
import test from 'ava';
import { applyDefaults, pruneUnknown } from './schema.js';
import { validateAgainstSchema } from './validate.js';

const schema = {
  type: 'object',
  required: ['spec'],
  properties: {
    spec: {
      type: 'object',
      required: ['image'],
      properties: {
        image: { type: 'string', minLength: 1 },
        port: { type: 'integer', minimum: 1, maximum: 65535 },
        mode: { type: 'string', enum: ['a', 'b'] },
        tags: { type: 'array', items: { type: 'string' }, maxItems: 2, 'x-kubernetes-list-type': 'set' },
        replicas: { type: 'integer', default: 1 },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    },
  },
};

test('violations come back with the apiserver field paths and messages', (t) => {
  const errors = validateAgainstSchema({ spec: { image: '', port: 0.5, mode: 'c', tags: ['x', 'x', 'y'] } }, schema, '');
  t.deepEqual(
    errors.map((e) => `${e.type} ${e.field}: ${e.detail}`),
    [
      'FieldValueInvalid spec.image: Invalid value: "": spec.image in body should be at least 1 chars long',
      'FieldValueTypeInvalid spec.port: Invalid value: "number": spec.port in body must be of type integer: "number"',
      'FieldValueInvalid spec.port: Invalid value: 0.5: spec.port in body should be greater than or equal to 1',
      'FieldValueNotSupported spec.mode: Unsupported value: "c": supported values: "a", "b"',
      'FieldValueTooMany spec.tags: Too many: 3: must have at most 2 items',
      'FieldValueDuplicate spec.tags[1]: Duplicate value: "x"',
    ],
  );
  t.deepEqual(
    validateAgainstSchema({}, schema, '').map((e) => `${e.field}: ${e.detail}`),
    ['spec: Required value'],
  );
});

test('pruning drops undeclared fields but keeps preserved ones; defaulting fills declared defaults', (t) => {
  const obj: any = {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'n', junk: 1 },
    spec: { image: 'i', extra: 1, free: { any: { thing: 1 } } },
    top: 1,
  };
  t.deepEqual(pruneUnknown(obj, schema).sort(), ['metadata.junk', 'spec.extra', 'top']);
  applyDefaults(obj, schema);
  t.deepEqual(obj, {
    apiVersion: 'x/v1',
    kind: 'X',
    metadata: { name: 'n' },
    spec: { image: 'i', free: { any: { thing: 1 } }, replicas: 1 },
  });
});
