import { Type } from '@sinclair/typebox'
import { NewPlant, Plant } from './schemas/plant.js'
const X = Type.Composite([Type.Pick(NewPlant, ['id']), Plant], { $id: 'PlantListItem', additionalProperties: false, description: 'd' })
console.log(JSON.stringify(X, null, 1))
