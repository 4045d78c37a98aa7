// The CustomApp CustomResourceDefinition, built from the schema in api/customapp.ts.
import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-27';
import {
  CRD_NAME,
  CUSTOM_APP_SCHEMA,
  GROUP,
  KIND,
  PLURAL,
  PRINTER_COLUMNS,
  SCALE_SUBRESOURCE,
  SHORT_NAMES,
  SINGULAR,
  VERSION,
  type SchemaNode,
} from '../api/customapp.js';

/** Properties of {@link CustomAppCrd}. */
export interface CustomAppCrdProps {
  /**
   * Extra categories for `kubectl get <category>`.
   * @default ['all']
   */
  readonly categories?: readonly string[];
}

/** Converts a schema node in JSON spelling into cdk8s' typed JSONSchemaProps (so a typo fails to compile). */
export function toJsonSchemaProps(node: SchemaNode): k8s.JsonSchemaProps {
  const properties = node.properties
    ? Object.fromEntries(Object.entries(node.properties).map(([key, child]) => [key, toJsonSchemaProps(child)]))
    : undefined;
  return {
    type: node.type,
    description: node.description,
    format: node.format,
    properties,
    required: node.required ? [...node.required] : undefined,
    // cdk8s serializes `items` as given (typed any), never through its camel-to-JSON renaming: it must be the JSON
    // spelling already, or an x-kubernetes-* field inside would reach the API server camel-cased and be dropped.
    items: node.items ? jsonSpelling(node.items) : undefined,
    maxItems: node.maxItems,
    pattern: node.pattern,
    minLength: node.minLength,
    maxLength: node.maxLength,
    minimum: node.minimum,
    maximum: node.maximum,
    enum: node.enum ? [...node.enum] : undefined,
    default: node.default,
    xKubernetesListType: node['x-kubernetes-list-type'],
    xKubernetesListMapKeys: node['x-kubernetes-list-map-keys'] ? [...node['x-kubernetes-list-map-keys']] : undefined,
    xKubernetesIntOrString: node['x-kubernetes-int-or-string'],
    anyOf: node.anyOf?.map(toJsonSchemaProps),
    not: node.not ? toJsonSchemaProps(node.not) : undefined,
  };
}

/** A schema node in JSON spelling with the undefined fields left out, as the API server reads it. */
function jsonSpelling(node: SchemaNode): SchemaNode {
  return JSON.parse(JSON.stringify(node)) as SchemaNode;
}

/**
 * The `customapps.app.example.com` CRD: namespaced, version v1 (served and stored), short name `ca`, with the
 * status and scale subresources, a structural schema that validates what a schema can, and printer columns.
 */
export class CustomAppCrd extends Construct {
  /** The CRD's API object. */
  public readonly apiObject: k8s.KubeCustomResourceDefinition;

  constructor(scope: Construct, id: string, props: CustomAppCrdProps = {}) {
    super(scope, id);
    this.apiObject = new k8s.KubeCustomResourceDefinition(this, 'Resource', {
      metadata: { name: CRD_NAME },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: {
          kind: KIND,
          listKind: `${KIND}List`,
          plural: PLURAL,
          singular: SINGULAR,
          shortNames: [...SHORT_NAMES],
          categories: [...(props.categories ?? ['all'])],
        },
        versions: [
          {
            name: VERSION,
            served: true,
            storage: true,
            subresources: { status: {}, scale: { ...SCALE_SUBRESOURCE } },
            schema: { openApiv3Schema: toJsonSchemaProps(CUSTOM_APP_SCHEMA) },
            additionalPrinterColumns: PRINTER_COLUMNS.map((column) => ({ ...column })),
          },
        ],
      },
    });
  }
}
