import { execFile } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import t from 'tap'
import { loadConfig } from '../../src/config/index.js'
import { codeBlocks, readPage } from '../helpers/markdown.js'

// docs/deploy.md's secrets are made by its own commands, and read as the service reads
// them; its other blocks need Docker, and say so.

const run = promisify(execFile)

t.test("the page's commands make the secrets the stack reads", async (t) => {
  try {
    await run('openssl', ['version'])
  } catch {
    if (process.env.CI === 'true') throw new Error('no openssl, and CI=true runs the page\'s commands: apt-get install -y openssl')
    t.pass('needs openssl', { skip: 'no openssl on PATH (under CI=true this fails instead)' })
    return
  }
  const block = codeBlocks(readPage('docs/deploy.md')).find((block) => block.lang === 'sh' && block.headings.at(-1) === 'Secrets')
  t.ok(block, 'the page has its secrets')
  const dir = t.testdir()
  await run('sh', ['-c', block?.code ?? ''], { cwd: dir, env: { PATH: process.env.PATH } })
  const config = loadConfig({ API_TOKENS_FILE: join(dir, 'secrets', 'api_tokens') })
  t.same(config.tokens.map((token) => typeof token === 'string' ? 'every scope' : token.scopes.join(' ')),
    ['plants:read', 'plants:read plants:write', 'webhooks metrics'], 'each token with the scopes its comment gives')
  t.ok(config.tokens.every((token) => typeof token !== 'string' && /^[0-9a-f]{64}$/.test(token.token)), 'random tokens, long enough')
  t.same(config.shortTokens, [])
  t.match(readFileSync(join(dir, 'secrets', 'db_password'), 'utf8'), /^[0-9a-f]{64}\n$/)
  t.equal(statSync(join(dir, 'secrets')).mode & 0o777, 0o700, 'the directory protects them')
  for (const file of ['api_tokens', 'db_password']) t.equal(statSync(join(dir, 'secrets', file)).mode & 0o777, 0o644, `${file} is readable by the service's user`)
})
