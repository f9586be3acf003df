import fastJson from 'fast-json-stringify'
import { NewPlant } from '../../schemas/plant.js'

// The serializer Fastify compiles for responses, from the NewPlant schema.
const serialize = fastJson(NewPlant)

/** The NewPlant JSON of a plant, as a webhook body carries it: `{"id":…,"name":…,"tag":…}`. */
export function stringifyNewPlant (plant: NewPlant): string {
  return serialize(plant)
}

/** The data of a plant.deleted event: `{"id":…}`, the id exact. */
export function deletedData (id: bigint): string {
  return `{"id":${id}}`
}
