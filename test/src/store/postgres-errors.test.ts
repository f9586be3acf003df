import t from 'tap'
import { isLostConnection, isUnavailable, readOnly } from '../../../src/store/postgres/errors.js'

const error = (message: string, code?: string): Error & { code?: string } => Object.assign(new Error(message), { code })

t.test('a lost connection: ended by the server, or found dead on use; another may answer', async (t) => {
  for (const lost of [
    error('terminating connection due to administrator command', '57P01'),
    error('terminating connection because of crash of another server process', '57P02'),
    error('read ECONNRESET', 'ECONNRESET'),
    error('write EPIPE', 'EPIPE'),
    error('Connection terminated unexpectedly')
  ]) {
    t.ok(isLostConnection(lost), lost.message)
    t.ok(isUnavailable(lost), `${lost.message}: an outage too, should the second send fail as well`)
  }
  for (const other of [
    error('cannot execute INSERT in a read-only transaction', '25006'),
    error('canceling statement due to statement timeout', '57014'),
    error('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED'),
    error('duplicate key value violates unique constraint', '23505'),
    error('timeout exceeded when trying to connect')
  ]) t.notOk(isLostConnection(other), other.message)
})

t.test('the error of a check that finds the database read-only is an outage, not a lost connection', async (t) => {
  const error = readOnly()
  t.match(error, { code: '25006', message: /read-only/ })
  t.ok(isUnavailable(error))
  t.notOk(isLostConnection(error))
})
