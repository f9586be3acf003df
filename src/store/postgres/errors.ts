// The server cannot be reached or cannot answer now (network errors, SQLSTATE class 08, shutdown,
// too many connections, statement timeout), as opposed to a request it refuses.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH',
  'ENOTFOUND', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300', '57014'])
// pg reports a lost connection and its own timeouts by message only.
const UNAVAILABLE_MESSAGE = /^(Connection terminated|timeout exceeded|Query read timeout|Client has encountered a connection error)/

/** Whether an error of pg or of the network means "the store is unavailable now" (a 503). */
export function isUnavailable (error: Error & { code?: string }): boolean {
  const code = String(error.code)
  return UNAVAILABLE_CODES.has(code) || code.startsWith('08') || UNAVAILABLE_MESSAGE.test(error.message)
}
