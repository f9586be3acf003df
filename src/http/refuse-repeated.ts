import type { FastifyRequest } from 'fastify'
import { HttpError } from './errors.js'

/** A repeated parameter (`?limit=5&limit=6`) arrives as an array: refused by name before the schema sees it. */
export async function refuseRepeated (request: FastifyRequest): Promise<void> {
  const repeated = Object.entries(request.query as Record<string, unknown>).find(([, value]) => Array.isArray(value))
  if (repeated !== undefined) throw new HttpError(400, `querystring/${repeated[0]} is repeated: give it once.`)
}
