import 'reflect-metadata';
import { getMetadataStorage } from 'class-validator';

/** A JSON Schema object of the OpenAPI document (OpenAPI 3.0 dialect). */
export type Schema = Record<string, unknown>;

/** class-validator names → the JSON type they accept. */
const TYPE_OF: Record<string, Schema> = {
  isString: { type: 'string' },
  isInt: { type: 'integer' },
  isNumber: { type: 'number' },
  isBoolean: { type: 'boolean' },
  isObject: { type: 'object', additionalProperties: { type: 'string' } },
};

/**
 * The JSON Schema of a request DTO, read from the validation rules the server applies (the global
 * pipe rejects unknown fields, hence `additionalProperties: false`), so the document cannot drift
 * from what the API accepts. Nested DTOs (`@ValidateNested`) become entries of `nested` by class name.
 */
export function dtoSchema(dto: new () => unknown, nested: Map<string, Schema>): Schema {
  const rules = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false);
  const props = new Map<string, { schema: Schema; optional: boolean; array: boolean }>();
  const entry = (name: string) => {
    if (!props.has(name)) props.set(name, { schema: {}, optional: false, array: false });
    return props.get(name)!;
  };
  for (const rule of rules) {
    const p = entry(rule.propertyName);
    if (rule.name === 'isOptional' || rule.type === 'conditionalValidation') p.optional = true;
    else if (rule.name === 'isArray') p.array = true;
    else if (rule.type === 'nestedValidation') {
      const cls = Reflect.getMetadata('design:type', dto.prototype as object, rule.propertyName) as (new () => unknown) | undefined;
      if (!cls) throw new Error(`${dto.name}.${rule.propertyName}: nested DTO without a type`);
      if (!nested.has(cls.name)) nested.set(cls.name, dtoSchema(cls, nested));
      p.schema = { $ref: `#/components/schemas/${cls.name}` };
    } else if (rule.name && TYPE_OF[rule.name]) {
      p.schema = { ...TYPE_OF[rule.name] };
      if (rule.each) p.array = true;
    } else if (rule.name) throw new Error(`${dto.name}.${rule.propertyName}: no schema for validator ${rule.name}`);
  }
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  for (const [name, p] of props) {
    properties[name] = p.array ? { type: 'array', items: p.schema } : p.schema;
    if (!p.optional) required.push(name);
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}
