import { Ajv, type AnySchema, type ErrorObject, type KeywordDefinition, type Options } from 'ajv'
import type { DataValidationCxt } from 'ajv/dist/types/index.js'
import type { FastifySchemaCompiler } from 'fastify'
import type { SchemaErrorFormatter } from 'fastify/types/schema.js'
import { STORABLE_TEXT } from '../../schemas/plant.js'
import { CANONICAL_DECIMAL, INT64_MAX, INT64_MIN, isInt64 } from '../shared/ids.js'

const KEYWORD = 'int64'
const DECIMAL_KEYWORD = 'decimal'
const NOT_INTEGER = 'must be integer'
const OUT_OF_RANGE = `must be an integer from ${INT64_MIN} to ${INT64_MAX}`

/** The value as a BigInt, or the reason it is not a signed 64-bit integer. */
export function readInt64 (value: unknown, fromString: boolean): bigint | string {
  let int: bigint
  if (typeof value === 'bigint') {
    int = value
  } else if (typeof value === 'number') {
    // The body parser gives integers beyond 2^53 as BigInt and those beyond a double's range as ±Infinity.
    if (!Number.isSafeInteger(value)) return Number.isInteger(value) || Math.abs(value) === Infinity ? OUT_OF_RANGE : NOT_INTEGER
    int = BigInt(value)
  } else if (fromString && typeof value === 'string' && CANONICAL_DECIMAL.test(value)) {
    int = BigInt(value)
  } else {
    return NOT_INTEGER
  }
  return isInt64(int) ? int : OUT_OF_RANGE
}

function int64Keyword (fromString: boolean): KeywordDefinition {
  function validate (this: unknown, _schema: boolean, data: unknown, _parent: unknown, cxt?: DataValidationCxt): boolean {
    const result = readInt64(data, fromString)
    if (typeof result === 'string') {
      validate.errors = [{ keyword: KEYWORD, message: result, params: {} }]
      return false
    }
    // Every accepted id reaches the handler as a BigInt, whatever its size.
    (cxt as DataValidationCxt).parentData[(cxt as DataValidationCxt).parentDataProperty] = result
    return true
  }
  validate.errors = undefined as Array<Partial<ErrorObject>> | undefined
  return { keyword: KEYWORD, schemaType: 'boolean', modifying: true, errors: true, validate }
}

// Ajv's `integer` type rejects BigInt, so int64 schemas are compiled as our keyword; other integers in text
// as `decimal` (canonical digits only, where Ajv's coercion would take `010` or `1e1`).
function forAjv (schema: unknown, text: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((item) => forAjv(item, text))
  if (schema === null || typeof schema !== 'object') return schema
  const entries = Object.entries(schema)
  const object = Object.fromEntries(entries.map(([key, value]) => [key, forAjv(value, text)]))
  if (object.format === 'int64' && object.type === 'integer') {
    // The document's bounds (-2^63, 2^63 exclusive) are doubles: the keyword checks the exact range instead.
    delete object.format
    delete object.type
    delete object.minimum
    delete object.exclusiveMaximum
    object[KEYWORD] = true
    return object
  }
  // Said for the document's readers: minimum and maximum carry the range.
  if (object.format === 'int32' && object.type === 'integer') delete object.format
  if (text && object.type === 'integer') {
    object[DECIMAL_KEYWORD] = { minimum: object.minimum, maximum: object.maximum }
    delete object.type
    delete object.minimum
    delete object.maximum
  }
  return object
}

// An integer written in text, as a person would: `7`, `-7`; not `007`, `+7`, `7.0` or `1e1`.
const decimalKeyword: KeywordDefinition = {
  keyword: DECIMAL_KEYWORD,
  schemaType: 'object',
  modifying: true,
  errors: true,
  validate: function validate (this: unknown, range: { minimum: number, maximum: number }, data: unknown, _parent: unknown, cxt?: DataValidationCxt): boolean {
    // Text arrives as a string; a number here is the schema's own default.
    const value = typeof data === 'number' ? data : typeof data === 'string' && CANONICAL_DECIMAL.test(data) ? Number(data) : NaN
    if (!(value >= range.minimum && value <= range.maximum)) {
      (validate as { errors?: Array<Partial<ErrorObject>> }).errors = [{ keyword: DECIMAL_KEYWORD, message: `must be an integer from ${range.minimum} to ${range.maximum}, in plain decimal digits`, params: {} }]
      return false
    }
    (cxt as DataValidationCxt).parentData[(cxt as DataValidationCxt).parentDataProperty] = value
    return true
  }
}

function createAjv (fromString: boolean, schemas: AnySchema[], options: Options): Ajv {
  // validateSchema: false skips compiling Ajv's meta-schema at every start.
  const ajv = new Ajv({ useDefaults: true, removeAdditional: true, allErrors: false, validateSchema: false, ...options })
  ajv.addKeyword(int64Keyword(fromString))
  if (fromString) ajv.addKeyword(decimalKeyword)
  for (const schema of schemas) ajv.addSchema(forAjv(schema, fromString) as AnySchema)
  return ajv
}

// Node gives every header name in lowercase.
function lowerCaseNames (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lowerCaseNames)
  if (schema === null || typeof schema !== 'object') return schema
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => {
    if (key === 'properties' && value !== null && typeof value === 'object') {
      return [key, Object.fromEntries(Object.entries(value).map(([name, property]) => [name.toLowerCase(), lowerCaseNames(property)]))]
    }
    if (key === 'required' && Array.isArray(value)) return [key, value.map((name) => String(name).toLowerCase())]
    return [key, lowerCaseNames(value)]
  }))
}

/** A Fastify validator compiler that keeps int64 values exact. */
export function int64ValidatorCompiler (schemas: AnySchema[]): FastifySchemaCompiler<AnySchema> {
  const body = createAjv(false, schemas, { coerceTypes: false })
  // Text is never coerced (the keywords read it) and an unknown query parameter is an error, not dropped.
  const text = createAjv(true, schemas, { coerceTypes: false, removeAdditional: false })
  return ({ schema, httpPart }) => {
    if (httpPart === 'body') return body.compile(forAjv(schema, false) as AnySchema)
    return text.compile(forAjv(httpPart === 'headers' ? lowerCaseNames(schema) : schema, true) as AnySchema)
  }
}

/** Ajv's rule, in words for a person where Ajv's are for a programmer. */
function describe (error: ErrorObject): string | undefined {
  if (error.keyword === 'pattern' && error.params.pattern === STORABLE_TEXT) return 'must not contain U+0000 or an unpaired UTF-16 surrogate'
  // A field the schema forbids (`{not: {}}`): an id in a patch.
  if (error.keyword === 'not') return 'must not be present'
  if (error.keyword === 'type' && Array.isArray(error.params.type)) return `must be ${error.params.type.join(' or ')}`
  if (error.keyword === 'maxLength') return `must be at most ${error.params.limit} characters long (Unicode code points)`
  return error.message
}

/** Fastify's error text (`body/id must be integer`), with plain sentences where Ajv's are not. */
export const formatValidationErrors: SchemaErrorFormatter = (errors, dataVar) => {
  const text = errors.map((error) => {
    // The name is the client's: quoted no longer than a message may be.
    if (error.keyword === 'additionalProperties') return `${dataVar}/${String(error.params.additionalProperty).slice(0, 200)} is not a parameter of this operation`
    return `${dataVar}${error.instancePath} ${describe(error)}`
  })
  return new Error(text.join(', '))
}
