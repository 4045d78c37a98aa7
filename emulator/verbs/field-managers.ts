// managedFields bookkeeping of a write: the manager it is recorded as, and the fields a subresource's write ignores.
import { FieldSet, fieldElement } from '../fieldset.js';
import { defaultManager } from '../managedfields.js';
import { zeroValue } from '../openapi/builtin.js';
import { resetFields } from '../patch/apply.js';
import type { ResourceType } from '../resources.js';
import type { WriteContext } from './types.js';

export function manager(ctx: WriteContext): string {
  return ctx.fieldManager ?? defaultManager(ctx.userAgent);
}

export function ignoredFields(rt: ResourceType, subresource: string): FieldSet {
  if (subresource === 'status') {
    const set = new FieldSet();
    for (const field of Object.keys(zeroValue(rt.openapiName ?? '')).concat(['spec']))
      if (field !== 'status' && field !== 'metadata') set.insert([fieldElement(field)]);
    return set;
  }
  return rt.statusPolicy === 'subresource' ? resetFields(['status']) : new FieldSet();
}
