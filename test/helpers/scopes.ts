import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { SCOPES, type Scope } from '../../src/shared/scopes.js'

/** One token per scope, each with that scope only. */
export const SCOPED: Record<Scope, string> = {
  'plants:read': 'read-only-dashboard-token-0123456789',
  'plants:write': 'writer-token-0123456789abcdefghijklmn',
  webhooks: 'webhooks-operator-token-0123456789abcd',
  metrics: 'metrics-scraper-token-0123456789abcdefg',
  'events:read': 'feed-follower-token-0123456789abcdefgh'
}

export const bearer = (scope: Scope) => ({ authorization: `Bearer ${SCOPED[scope]}` })

/**
 * A tokens file (API_TOKENS_FILE) with the SCOPED tokens, each on a line with its one scope;
 * in a directory of its own, as the test's fixture directory is made afresh for its SQLite file.
 */
export function scopedTokensFile (t: Test, extra = ''): string {
  const dir = mkdtempSync(join(tmpdir(), 'plant-store-tokens-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'api_tokens')
  writeFileSync(file, `# one token per scope\n${SCOPES.map((scope) => `${SCOPED[scope]} ${scope}`).join('\n')}\n${extra}`)
  return file
}

/** What a 403 for a token without `scope` carries: the challenge that names it. */
export const INSUFFICIENT = (scope: Scope) => `Bearer realm="plant-store", error="insufficient_scope", scope="${scope}"`
