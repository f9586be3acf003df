import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { TSchema } from '@sinclair/typebox'
import t from 'tap'
import { Environment, loadConfig } from '../../src/config/index.js'
import { SCOPES } from '../../src/http/scopes.js'
import { build } from '../helpers/build.js'
import { codeBlocks, readPage, tableRows, type CodeBlock } from '../helpers/markdown.js'

// What the README shows is what the service does: its curl walkthrough is run against
// the service, its tokens file is read as the service reads it, and its configuration
// table is held to src/config/index.ts.

const run = promisify(execFile)
const README = readPage('README.md')
const EXAMPLE_BASE = 'http://127.0.0.1:3000'

function block (section: string, lang: string): CodeBlock | undefined {
  return codeBlocks(README).find((candidate) => candidate.lang === lang && candidate.headings.at(-1) === section)
}

interface Step {
  /** The comment above the command: `# 200: created`, the status first. */
  status: number
  title: string
  command: string
  /** The `# …` lines under the command: a header (`Name: value`) or the body. */
  shown: string[]
}

/** The walkthrough's variables (`TOKEN=…` lines, the test gives them values) and its steps. */
function steps (code: string): { variables: string[], steps: Step[] } {
  const variables: string[] = []
  const parsed: Step[] = []
  for (const chunk of code.trim().split(/\n\s*\n/)) {
    const lines = chunk.split('\n')
    if (lines.every((line) => /^[A-Z_]+=/.test(line))) {
      variables.push(...lines.map((line) => line.split('=')[0]))
      continue
    }
    const title = lines.shift() as string
    const status = /^# (\d{3})\b/.exec(title)
    if (status === null) throw new Error(`a step starts with "# <status>": ${title}`)
    const command: string[] = []
    while (lines.length > 0 && !lines[0].startsWith('#')) command.push(lines.shift() as string)
    if (command.length === 0) throw new Error(`no command under ${title}`)
    const shown = lines.map((line) => {
      if (!line.startsWith('# ')) throw new Error(`under ${title}, "${line}" is not "# " and what the command shows`)
      return line.slice(2)
    })
    parsed.push({ status: Number(status[1]), title, command: command.join('\n'), shown })
  }
  return { variables, steps: parsed }
}

/** `curl -i`'s output: the last status line and its headers (after any `100 Continue`), and the body. */
function answer (output: string): { status: number, headers: Map<string, string>, body: string } {
  let rest = output
  let head: RegExpExecArray | null
  let last: RegExpExecArray | undefined
  while ((head = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n/.exec(rest)) !== null) {
    last = head
    rest = rest.slice(head[0].length)
  }
  if (last === undefined) throw new Error(`not an HTTP answer: ${output}`)
  const headers = new Map(last[2].split('\r\n').filter((line) => line !== '').map((line) => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
  }))
  return { status: Number(last[1]), headers, body: rest }
}

async function hasCurl (): Promise<boolean> {
  try {
    await run('curl', ['--version'])
    return true
  } catch {
    return false
  }
}

t.test("the README's curl walkthrough, run against the service, shows what it says", async (t) => {
  if (!await hasCurl()) {
    if (process.env.CI === 'true') throw new Error('no curl, and CI=true runs the README\'s walkthrough: apt-get install -y curl')
    t.pass('needs curl', { skip: 'no curl on PATH (under CI=true this fails instead)' })
    return
  }
  const walkthrough = block('curl', 'sh')
  t.ok(walkthrough, 'the README has its curl walkthrough')
  const { variables, steps: walk } = steps(walkthrough?.code ?? '')
  t.ok(walk.length >= 15, `the walkthrough has its ${walk.length} steps`)
  const statuses = new Set(walk.map((step) => step.status))
  for (const status of [200, 204, 400, 401, 403, 404, 409, 413, 415]) t.ok(statuses.has(status), `it shows a ${status}`)

  // The two tokens the walkthrough names: one with every scope, one that may only read.
  const values: Record<string, string> = { TOKEN: 'walkthrough-token-with-every-scope-0001', READ_TOKEN: 'walkthrough-token-that-may-only-read-0001' }
  t.same(variables.sort(), Object.keys(values).sort(), 'the walkthrough sets the variables the test gives')
  // t.testdir() empties its directory at each call: called once, for the tokens and the database.
  const dir = t.testdir()
  const tokens = join(dir, 'api_tokens')
  await writeFile(tokens, `${values.TOKEN}\n${values.READ_TOKEN} plants:read\n`)
  const app = await build(t, { API_TOKENS: '', API_TOKENS_FILE: tokens, DATABASE_URL: `sqlite:${join(dir, 'plants.db')}` })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })

  // A cursor is sealed with a key each database makes for itself: the README's stands for the one this run's service gives.
  const cursors = new Map<string, string>()
  for (const step of walk) {
    t.ok(step.command.includes(EXAMPLE_BASE), `${step.title}: the command calls ${EXAMPLE_BASE}`)
    let command = step.command.replaceAll(EXAMPLE_BASE, base)
    for (const [shown, given] of cursors) command = command.replaceAll(`cursor=${shown}`, `cursor=${given}`)
    const { stdout } = await run('sh', ['-c', command], { env: { PATH: process.env.PATH, ...values }, maxBuffer: 4 * 1024 * 1024 })
    const seen = answer(stdout)
    t.equal(seen.status, step.status, step.title)
    const body = step.shown.filter((line) => !/^[A-Za-z-]+: /.test(line))
    t.ok(body.length <= 1, `${step.title}: one line of body at most`)
    t.equal(seen.body, body[0] ?? '', `${step.title}: the body`)
    for (const line of step.shown.filter((line) => /^[A-Za-z-]+: /.test(line))) {
      const [name, value] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]
      const header = seen.headers.get(name.toLowerCase())
      const shown = /cursor=([A-Za-z0-9_-]+)/.exec(value)
      const given = header === undefined ? null : /cursor=([A-Za-z0-9_-]+)/.exec(header)
      if (shown !== null && given !== null) {
        t.equal(given[1].length, shown[1].length, `${step.title}: a cursor as long as the README's`)
        cursors.set(shown[1], given[1])
      }
      t.equal(header?.replace(/cursor=[A-Za-z0-9_-]+/, `cursor=${shown?.[1]}`), value, `${step.title}: ${name}`)
    }
  }
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
  const accepted = Object.keys(Environment.properties)
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
  t.ok(SCOPES.every((scope) => README.includes(`| \`${scope}\` |`)), 'and the scopes table every scope')
})
