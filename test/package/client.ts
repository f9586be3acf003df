// plant-store/client as an app installs it: test/package.test.ts compiles it
// against the published types and runs it against the host's /v1 (the plants
// plugin under a prefix, behind our auth), printing what it saw.
import { createClient, PlantStoreError } from 'plant-store/client'

const [baseUrl, token] = process.argv.slice(2)
const plants = createClient({ baseUrl, token })
const seen: string[] = []

await plants.create({ id: 2n ** 63n - 1n, name: 'Max', tag: 'client' })
await plants.create({ id: '-9223372036854775808', name: 'Min', tag: 'client' })
seen.push(JSON.stringify(await plants.get(2n ** 63n - 1n)))
for await (const plant of plants.list({ tag: 'client', limit: 1 })) seen.push(`${typeof plant.id} ${plant.id} ${plant.name}`)
await plants.delete(-(2n ** 63n))
for (const attempt of [() => plants.get(-(2n ** 63n)), () => plants.create({ id: 2n ** 63n - 1n, name: 'Other' })]) {
  try {
    await attempt()
  } catch (error) {
    if (!(error instanceof PlantStoreError)) throw error
    seen.push(`${error.kind} ${error.status} ${error.message}`)
  }
}
process.stdout.write(`${seen.join('\n')}\n`)
