import { hash } from 'node:crypto'
import type { Plant } from '../../schemas/plant.js'

/**
 * The plant's entity tag, the text between the ETag's quotes: base64url of SHA-256 over
 * its name, U+0000, and, when it has a tag, U+0000 and the tag, in UTF-8. Stored text
 * never holds U+0000, so two plants share it only when name and tag are the same: a
 * validator of the content, the same on every store and instance, with no column to keep.
 * The PostgreSQL store computes the same in SQL (postgres/etag.ts) to check If-Match
 * in the statement that writes.
 */
export function plantEtag (plant: Plant): string {
  return hash('sha256', plant.tag === undefined ? `${plant.name}\0` : `${plant.name}\0\0${plant.tag}`, 'base64url')
}
