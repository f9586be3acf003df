import { error } from '../plants/responses.js'

export const tags = ['webhooks']
export const notFound = error('No webhook endpoint has this id')

// The scope a token needs for every route of this plugin (the auth plugin checks it).
export const config = { scope: 'webhooks' } as const
