import { error } from '../plants/responses.js'

export const tags = ['webhooks']
export const notFound = error('No webhook endpoint has this id')
