/**
 * Why a test that needs something outside Node (a database server, a browser)
 * skips, or undefined when it runs. Outside CI a missing service is a skip that
 * says what is missing; under CI=true it is a failure, so CI cannot pass by skipping.
 */
export function skipUnless (present: boolean, missing: string): string | undefined {
  if (present) return undefined
  if (process.env.CI === 'true') throw new Error(`CI=true, but ${missing}: this test must run in CI`)
  return `${missing} (set CI=true to make this a failure)`
}

/** Why a PostgreSQL test skips: no server named. */
export const PG_SKIP = skipUnless(Boolean(process.env.PLANT_STORE_TEST_PG_URL), 'PLANT_STORE_TEST_PG_URL is not set (a PostgreSQL URL)')
