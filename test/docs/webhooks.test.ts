import t from 'tap'
import { NewPlant, PlantCreatedEvent, PlantDeletedEvent, PlantUpdatedEvent } from '../../schemas/index.js'
import { verifyWebhook } from '../../src/client/verify-webhook.js'
import { makeSecret, signatureHeaders } from '../../src/webhooks/signing.js'
import { codeBlocks, readPage } from '../helpers/markdown.js'

// docs/webhooks.md's events have the fields of the service's schemas, and a receiver reads them as the page says.

t.test("the page's events have their schemas' fields, and verifyWebhook reads each", async (t) => {
  const block = codeBlocks(readPage('docs/webhooks.md')).find((block) => block.lang === 'json' && block.headings.at(-1) === 'What a receiver gets')
  const lines = (block?.code ?? '').trimEnd().split('\n')
  t.same(lines.map((line) => JSON.parse(line).type), ['plant.created', 'plant.updated', 'plant.deleted'], 'one of each type')
  const secret = makeSecret()
  for (const line of lines) {
    const { type, timestamp, data } = JSON.parse(line)
    const schema = type === 'plant.deleted' ? PlantDeletedEvent : type === 'plant.created' ? PlantCreatedEvent : PlantUpdatedEvent
    t.same(Object.keys(JSON.parse(line)).sort(), Object.keys(schema.properties).sort(), `${type}: the fields of ${schema.$id}`)
    const fields = type === 'plant.deleted' ? Object.keys(PlantDeletedEvent.properties.data.properties) : Object.keys(NewPlant.properties)
    t.ok(Object.keys(data).every((field) => fields.includes(field)), `${type}: its data has no field the schema lacks`)
    t.equal(new Date(timestamp).toISOString(), timestamp, `${type}: an RFC 3339 timestamp`)
    const event = verifyWebhook(secret, { ...signatureHeaders('msg_page', line, [secret]) }, line, { events: true })
    t.equal(event.type, type)
    t.equal(event.data.id, 9007199254740993n, `${type}: its id exact`)
  }
})
