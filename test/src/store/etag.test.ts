import fc from 'fast-check'
import t from 'tap'
import type { Plant } from '../../../schemas/plant.js'
import { plantEtag } from '../../../src/store/etag.js'
import { etagSql, matchText } from '../../../src/store/postgres/etag.js'
import { connect, freshPostgresUrl, PG_SKIP } from '../../helpers/postgres.js'

// Text a store can hold: any code point but U+0000 (fast-check's `binary` unit never makes a lone surrogate).
const text = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !s.includes('\0'))
const plant = fc.record({ name: text, tag: text }, { requiredKeys: ['name'] }) as fc.Arbitrary<Plant>

t.test('an ETag is 43 characters of base64url, the same for the same name and tag', async (t) => {
  t.doesNotThrow(() => fc.assert(fc.property(plant, (p) => {
    const etag = plantEtag(p)
    return /^[\w-]{43}$/.test(etag) && etag === plantEtag(p.tag === undefined ? { name: p.name } : { name: p.name, tag: p.tag })
  })))
})

t.test('plants that differ in name or tag have different ETags, where the fields\' text runs together', async (t) => {
  const plants: Plant[] = [
    { name: 'ab' }, { name: 'a', tag: 'b' }, { name: 'ab', tag: '' }, { name: 'a', tag: '' }, { name: 'a' },
    { name: '' }, { name: '', tag: '' }, { name: '', tag: 'a' }, { name: 'a', tag: 'a' }, { name: 'A' }, { name: 'é' }, { name: 'e\u0301' }
  ]
  t.equal(new Set(plants.map(plantEtag)).size, plants.length)
  t.doesNotThrow(() => fc.assert(fc.property(plant, plant, (a, b) => (a.name === b.name && a.tag === b.tag) === (plantEtag(a) === plantEtag(b)))))
})

t.test('matchText: only tags that could be ours, joined by spaces; none is a text that matches nothing', async (t) => {
  const ours = plantEtag({ name: 'Fern' })
  t.equal(matchText(undefined), null)
  t.equal(matchText([]), '')
  t.equal(matchText([ours, 'short', `${ours} x`, ours.replace(/./, '+'), ours]), `${ours} ${ours}`)
})

t.test('PostgreSQL computes the same ETag in SQL as the service does', { skip: PG_SKIP && `PostgreSQL: ${PG_SKIP}` }, async (t) => {
  const db = await connect(t, await freshPostgresUrl(t) as string)
  const samples = fc.sample(plant, 500)
  samples.push({ name: 'Monstera', tag: 'climber' }, { name: '' }, { name: '', tag: '' }, { name: '🌱 café', tag: '\u{10FFFF}' })
  const { rows } = await db.query<{ etag: string }>(
    `SELECT ${etagSql('p.name', 'p.tag')} AS etag FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p (name, tag, n) ORDER BY n`,
    [samples.map((p) => p.name), samples.map((p) => p.tag ?? null)])
  t.same(rows.map((row) => row.etag), samples.map(plantEtag))
})
