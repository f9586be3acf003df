import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { sharedSchemas } from '../../schemas/index.js'
import { sendError } from './errors.js'
import { formatValidationErrors, int64ValidatorCompiler } from './validation.js'
import { acceptJsonBodies } from './json-body.js'

/** Makes an encapsulated API plugin's own scope speak the service's JSON. */
export function jsonApiScope (instance: FastifyInstance) {
  const fastify = instance.withTypeProvider<TypeBoxTypeProvider>()
  // A host that already holds the shared schemas.
  for (const schema of sharedSchemas) {
    if (fastify.getSchema(schema.$id as string) === undefined) fastify.addSchema(schema)
  }
  fastify.setValidatorCompiler(int64ValidatorCompiler(sharedSchemas))
  fastify.setSchemaErrorFormatter(formatValidationErrors)
  fastify.setErrorHandler(sendError)
  acceptJsonBodies(fastify)
  return fastify
}
