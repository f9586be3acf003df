import spectralCore, { type RulesetDefinition } from '@stoplight/spectral-core'
import parsers from '@stoplight/spectral-parsers'
import owasp from '@stoplight/spectral-owasp-ruleset'
import t from 'tap'
import { build } from '../helpers/build.js'

// OWASP API4 (unrestricted resource consumption): every string, integer and array the
// document describes states its bounds, so that clients and gateways can hold requests to them.
const BOUNDS = ['owasp:api4:2023-string-limit', 'owasp:api4:2023-integer-limit', 'owasp:api4:2023-integer-format', 'owasp:api4:2023-array-limit']

// CommonJS packages, whose named exports Node cannot see from an ES module.
const { Document, Spectral } = spectralCore
// Its types describe the CommonJS build as an ES module's namespace; the import condition loads the ES build, whose default is the ruleset.
const ruleset = owasp as unknown as RulesetDefinition

/** The findings of the OWASP ruleset for BOUNDS, as `rule at path`. */
async function unbounded (text: string): Promise<string[]> {
  const spectral = new Spectral()
  spectral.setRuleset(ruleset)
  const results = await spectral.run(new Document(text, parsers.Json, 'openapi.json'))
  return results.filter((result) => BOUNDS.includes(String(result.code))).map((result) => `${result.code} at ${result.path.join('.')}`)
}

t.test('Spectral, OWASP ruleset: the served document bounds every string, integer and array', async (t) => {
  const app = await build(t)
  const served = await app.inject('/openapi.json')
  t.equal(served.headers['content-type'], 'application/json; charset=utf-8')
  t.same(await unbounded(served.body), [], 'no finding of string-limit, integer-limit, integer-format or array-limit')

  // The int64 bounds are written as the exact integers -2^63 and 2^63, not as JSON.stringify's 9223372036854776000.
  const document = served.json()
  t.match(served.body, /"format":"int64","minimum":-9223372036854775808,"exclusiveMaximum":9223372036854775808[,}]/)
  t.match(document.components.schemas.NewPlant.properties, { name: { maxLength: 1000 }, tag: { maxLength: 500 } })

  // The same document with one bound of each kind taken out: the ruleset must see what the bounds were put in for.
  const broken = structuredClone(document)
  delete broken.components.schemas.NewPlant.properties.name.maxLength
  delete broken.components.schemas.Error.properties.error.maximum
  delete broken.components.schemas.Error.properties.error.format
  delete broken.paths['/plants'].get.responses[200].content['application/json'].schema.maxItems
  t.same((await unbounded(JSON.stringify(broken))).sort(), [
    'owasp:api4:2023-array-limit at paths./plants.get.responses.200.content.application/json.schema',
    'owasp:api4:2023-integer-format at components.schemas.Error.properties.error',
    'owasp:api4:2023-integer-limit at components.schemas.Error.properties.error',
    'owasp:api4:2023-string-limit at components.schemas.NewPlant.properties.name'
  ], 'the ruleset runs and finds them')
})
