import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { TSchema } from '@sinclair/typebox'
import t from 'tap'
import { Environment, loadConfig } from '../../src/config/index.js'
import { unsupportedNode } from '../../src/config/node-support.js'
import { SCOPES } from '../../src/shared/scopes.js'
import { build } from '../helpers/build.js'
import { codeBlocks, readPage, tableRows, type CodeBlock } from '../helpers/markdown.js'
import { hasCurl, steps, walk } from '../helpers/walkthrough.js'

// What the README shows is what the service does: its curl walkthrough is run against
// the service, its tokens file is read as the service reads it, and its configuration
// table is held to src/config/index.ts.

const run = promisify(execFile)
const README = readPage('README.md')
// Read by the OpenTelemetry exporter itself, not by src/config: test/src/tracing/export.test.ts shows each at work.
const LIBRARY_VARIABLES = ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_COMPRESSION']

function block (section: string, lang: string): CodeBlock | undefined {
  return codeBlocks(README).find((candidate) => candidate.lang === lang && candidate.headings.at(-1) === section)
}

t.test("the README's curl walkthrough, run against the service started as it says, shows what it says", async (t) => {
  if (!await hasCurl()) {
    if (process.env.CI === 'true') throw new Error('no curl, and CI=true runs the README\'s walkthrough: apt-get install -y curl')
    t.pass('needs curl', { skip: 'no curl on PATH (under CI=true this fails instead)' })
    return
  }
  const [setup, walkthrough] = codeBlocks(README).filter((block) => block.lang === 'sh' && block.headings.at(-1) === 'curl')
  t.ok(setup !== undefined && walkthrough !== undefined, 'the README has its tokens file and its curl walkthrough')
  const { variables, steps: walkSteps } = steps(walkthrough?.code ?? '')
  t.ok(walkSteps.length >= 15, `the walkthrough has its ${walkSteps.length} steps`)
  const statuses = new Set(walkSteps.map((step) => step.status))
  for (const status of [200, 204, 400, 401, 403, 404, 409, 413, 415]) t.ok(statuses.has(status), `it shows a ${status}`)
  t.same(Object.keys(variables).sort(), ['READ_TOKEN', 'TOKEN'], 'the walkthrough names a token with every scope and one that may only read')

  // The setup as the README gives it: the tokens file made by its own commands, then the service started with it.
  // t.testdir() empties its directory at each call: called once, for the tokens and the database.
  const dir = t.testdir()
  const lines = (setup?.code ?? '').trimEnd().split('\n')
  const start = lines.pop()
  t.equal(start, 'API_TOKENS_FILE=secrets/api_tokens npm start', 'the setup ends by starting the service with the file')
  await run('sh', ['-c', lines.join('\n')], { cwd: dir, env: { PATH: process.env.PATH } })
  const tokens = join(dir, 'secrets', 'api_tokens')
  const config = loadConfig({ API_TOKENS_FILE: tokens })
  t.same(config.tokens, [variables.TOKEN, { token: variables.READ_TOKEN, scopes: ['plants:read'] }], 'the file holds the two tokens the walkthrough uses')
  t.same(config.shortTokens, [], 'long enough to start without a warning')
  const app = await build(t, { API_TOKENS: '', API_TOKENS_FILE: tokens, DATABASE_URL: `sqlite:${join(dir, 'plants.db')}` })
  await walk(t, walkSteps, await app.listen({ port: 0, host: '127.0.0.1' }), variables)
})

t.test("the README's tokens file reads as its comments say", async (t) => {
  const example = block('Tokens and scopes', 'text')
  t.ok(example, 'the README has its tokens file')
  const file = join(t.testdir(), 'api_tokens')
  await writeFile(file, example?.code ?? '')
  const config = loadConfig({ API_TOKENS_FILE: file })
  const scopes = config.tokens.map((token) => typeof token === 'string' ? 'every scope' : token.scopes.join(' '))
  t.same(scopes, ['plants:read', 'plants:read plants:write', 'webhooks metrics', 'every scope'])
  t.same(config.shortTokens, [], 'its tokens are long enough to start without a warning')
  t.equal(config.generatedToken, undefined)
})

t.test("the README's configuration table is src/config/index.ts's", async (t) => {
  const rows = tableRows(README, 'Configuration').slice(1)
  const names = rows.map(([name]) => /^`([A-Z_0-9]+)`$/.exec(name)?.[1] ?? name)
  const accepted = [...Object.keys(Environment.properties), ...LIBRARY_VARIABLES]
  t.same([...names].sort(), [...accepted].sort(), 'every variable the service accepts, once, and no other')
  t.same(new Set(names).size, names.length, 'no variable twice')

  // A documented default is the default: setting the variable to it changes nothing.
  const base = { API_TOKENS: 'a-token-of-the-configuration-test-01', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }
  const defaults = loadConfig(base)
  for (const [cell, given] of rows.map(([name, value]) => [name, value])) {
    const name = cell.replaceAll('`', '')
    const literal = /^`([^`]+)`$/.exec(given)
    const schema = (Environment.properties as Record<string, TSchema>)[name]
    if (literal === null) {
      t.equal(schema?.default, undefined, `${name}: no default in the table, none in the schema`)
      continue
    }
    t.same(loadConfig({ ...base, [name]: literal[1] }), defaults, `${name}=${literal[1]} is the default`)
  }
  t.ok(rows.length >= 30, 'the table has its rows')
  const exportTest = readPage('test/src/tracing/export.test.ts')
  for (const name of LIBRARY_VARIABLES) t.match(exportTest, `setEnv(t, '${name}'`, `${name} is shown at work`)
  t.ok(SCOPES.every((scope) => README.includes(`| \`${scope}\` |`)), 'and the scopes table every scope')
})

t.test('the README names what the service has: its components, the token advice and the Node.js it runs on', async (t) => {
  const app = await build(t)
  const components = Object.keys((await app.inject('/openapi.json')).json().components.schemas)
  const reference = /each a named\s+component: ([^.]+)\./.exec(README)?.[1] ?? ''
  t.same([...reference.matchAll(/`(\w+)`/g)].map((match) => match[1]).sort(), components.sort(), 'every component of the document, and no other')

  const warning = loadConfig({ API_TOKENS: 'short' }).shortTokens[0]
  const advice = /\((openssl [^)]+)\)/.exec(warning)?.[1] as string
  t.ok(README.includes(`(\`${advice}\`)`), `the README advises what the start warning does: ${advice}`)
  t.notMatch(README, /openssl rand -(?!hex 32)/, 'and nothing else')

  const refusal = (unsupportedNode('20.20.2') as string).replace(/ \(see .*$/, '')
  t.ok(README.replace(/\s+/g, ' ').includes(`\`${refusal}\``), `the README quotes the refusal: ${refusal}`)
  t.equal(unsupportedNode('22.12.0')?.startsWith('Node.js 22.12.0 is not supported'), true, 'the start refuses what the README says it does')
  t.match(README, 'Node.js 22 (22.13 or later) and\n24', 'the lines package.json\'s engines names')
})
