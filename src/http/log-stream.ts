import { writeSync } from 'node:fs'
import pino from 'pino'
import type { LogStream } from './server-options.js'

/** JSON lines to a file descriptor, written asynchronously. */
export function turnWriter (fd: number): LogStream {
  const destination = pino.destination({ dest: fd, sync: false })
  let held = ''
  const hand = (): void => {
    const lines = held
    held = ''
    destination.write(lines)
  }
  process.on('exit', () => {
    if (held === '') return
    try {
      destination.flushSync()
      writeSync(fd, held)
    /* c8 ignore next 3 -- a reader gone just as the process exits cannot be arranged from a test */
    } catch {
      // The reader is gone (a closed pipe): there is nothing left to write to.
    }
    held = ''
  })
  return {
    write (line: string): void {
      if (held === '') setImmediate(hand)
      held += line
    }
  }
}
