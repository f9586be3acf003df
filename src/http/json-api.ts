import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { sharedSchemas } from '../../schemas/index.js'
import { sendError } from './errors.js'
import { formatValidationErrors, int64ValidatorCompiler } from './validation.js'
import { acceptJsonBodies } from './json-body.js'

/**
 * Makes an encapsulated API plugin's own scope speak the service's JSON: the shared
 * schemas, exact int64 ids in bodies and validation, and the Error body for every
 * failure. All of it stays in that scope, so a host keeps its own parsers,
 * validator and error handler.
 */
export function jsonApiScope (instance: FastifyInstance) {
  const fastify = instance.withTypeProvider<TypeBoxTypeProvider>()
  // A host that already holds the shared schemas (the app keeps them at its root,
  // for the OpenAPI document) lends them; on any other host the plugin brings its own.
  for (const schema of sharedSchemas) {
    if (fastify.getSchema(schema.$id as string) === undefined) fastify.addSchema(schema)
  }
  fastify.setValidatorCompiler(int64ValidatorCompiler(sharedSchemas))
  fastify.setSchemaErrorFormatter(formatValidationErrors)
  fastify.setErrorHandler(sendError)
  acceptJsonBodies(fastify)
  return fastify
}
