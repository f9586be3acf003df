import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import type { Test } from 'tap'

export const CHROMIUM = '/usr/bin/chromium'

/**
 * A headless Chromium with a fresh profile in `dir` (the test's t.testdir(), which
 * must be made once: a second call empties it), closed when the test ends.
 * Without a Chromium at CHROMIUM the test is skipped and says why, unless
 * CI=true: there every browser test must run, so a missing browser fails it.
 */
export async function openBrowser (t: Test, dir: string): Promise<BrowserContext | undefined> {
  if (!existsSync(CHROMIUM)) {
    if (process.env.CI === 'true') throw new Error(`no Chromium at ${CHROMIUM}, and CI=true needs the browser tests: apt-get install -y chromium`)
    t.pass('needs Chromium', { skip: `no Chromium at ${CHROMIUM} (apt-get install -y chromium to run it; under CI=true it fails instead)` })
    return undefined
  }
  const context = await chromium.launchPersistentContext(join(dir, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 }
  })
  t.teardown(() => context.close())
  return context
}
