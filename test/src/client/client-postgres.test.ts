import t from 'tap'
import { clientSuite } from '../../helpers/client-suite.js'
import { PG_SKIP } from '../../helpers/postgres.js'

// One file a store, so that each runs within its own time limit.
t.test('postgres', { skip: PG_SKIP === undefined ? undefined : `PostgreSQL: ${PG_SKIP}` }, async (t) => clientSuite(t, 'postgres'))
