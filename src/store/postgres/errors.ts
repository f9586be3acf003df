// The network between the service and the server.
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])

// SQLSTATE classes in which every code means "not now" rather than "not this request".
const CLASSES = /^(08|28|53|57P)/

// Single codes of other classes with the same meaning.
const CODES = new Set([
  '25006', // read_only_sql_transaction: a standby after a failover, default_transaction_read_only
  '55000', // object_not_in_prerequisite_state: the database is not accepting connections
  '55006', // object_in_use: the database is being dropped, renamed or copied
  '57014', // query_canceled: the statement timeout
  '3D000' // invalid_catalog_name: the database does not exist (yet, or any more)
])

// pg reports a lost connection and its own timeouts by message only.
const MESSAGES = /^(Connection terminated|timeout exceeded|Query read timeout|Client has encountered a connection error)/

/** Whether an error of pg or of the network means "the store is unavailable now". */
export function isUnavailable (error: Error & { code?: string }): boolean {
  const code = String(error.code)
  return NETWORK.has(code) || CODES.has(code) || CLASSES.test(code) || MESSAGES.test(error.message)
}

// A connection the server ended (57P01 admin_shutdown, 57P02 crash_shutdown), or one found dead on use.
const LOST = new Set(['57P01', '57P02', 'ECONNRESET', 'EPIPE'])

/** Whether `error` says only that the connection it was sent on is gone: another one may well answer. */
export function isLostConnection (error: Error & { code?: string }): boolean {
  return LOST.has(String(error.code)) || error.message.startsWith('Connection terminated')
}

/** The error check() raises for a server that answers but cannot be written. */
export function readOnly (): Error & { code: string } {
  return Object.assign(new Error('the database is read-only (a standby, or default_transaction_read_only)'), { code: '25006' })
}
