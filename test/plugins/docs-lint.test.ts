import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import { build } from '../helpers/build.js'

const REDOCLY = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js')
const CONFIG = fileURLToPath(new URL('../../redocly.yaml', import.meta.url))

interface LintReport {
  totals: { errors: number, warnings: number }
  problems: Array<{ ruleId: string, message: string, location: Array<{ pointer: string }> }>
}

/** Runs `redocly lint` (recommended rules, redocly.yaml) on a document: offline, no usage data sent. */
async function lint (dir: string, name: string, document: unknown): Promise<LintReport> {
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(document))
  const env = { PATH: process.env.PATH, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }
  // It exits 1 when it finds an error: the report on standard output says which.
  const { stdout } = await promisify(execFile)(process.execPath, [REDOCLY, 'lint', file, '--config', CONFIG, '--format', 'json'], { env })
    .catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }))
  return JSON.parse(stdout)
}

const describe = (report: LintReport) => report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`)

t.test('Redocly lint, recommended rules: the served document has no error and no warning', async (t) => {
  const app = await build(t)
  const document = (await app.inject('/openapi.json')).json()
  const dir = t.testdir()

  // The same document without its servers and with a public route's `security: []` removed:
  // the linter must see what the document was fixed for, or a clean report would prove nothing.
  const broken = structuredClone(document)
  delete broken.servers
  delete broken.paths['/health'].get.security

  const [report, brokenReport] = await Promise.all([lint(dir, 'openapi.json', document), lint(dir, 'broken.json', broken)])
  t.same(describe(report), [], 'no problem')
  t.same(report.totals, { ...report.totals, errors: 0, warnings: 0 })

  t.same(brokenReport.problems.map((p) => p.ruleId).sort(), ['no-empty-servers', 'security-defined'], 'the linter runs and finds them')
})
