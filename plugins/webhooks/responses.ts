import { STORABLE_TEXT } from '../../schemas/plant.js'
import { MAX_ID_LENGTH } from '../../schemas/webhooks.js'
import { error } from '../../src/http/responses.js'

export const tags = ['webhooks']
export const notFound = error('No webhook endpoint has this id')
export const badId = error(`An id is longer than ${MAX_ID_LENGTH} characters`)

// The scope a token needs for every route of this plugin (the auth plugin checks it).
export const config = { scope: 'webhooks' } as const

const STORABLE = new RegExp(STORABLE_TEXT, 'u')

/** Whether a store could hold `id` at all: an id with U+0000 or a lone surrogate names nothing. */
export function storableId (id: string): boolean {
  return STORABLE.test(id)
}
