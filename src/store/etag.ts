import { hash } from 'node:crypto'
import type { Plant } from '../../schemas/plant.js'

/** The plant's entity tag, the text between the ETag's quotes. */
export function plantEtag (plant: Plant): string {
  return hash('sha256', plant.tag === undefined ? `${plant.name}\0` : `${plant.name}\0\0${plant.tag}`, 'base64url')
}
