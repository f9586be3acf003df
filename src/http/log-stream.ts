import { writeSync } from 'node:fs'
import pino from 'pino'
import type { LogStream } from './server-options.js'

/**
 * JSON lines to a file descriptor, written asynchronously (pino's destination), and the lines
 * of one turn of the event loop handed to it together, after the turn: under load a turn
 * answers a batch of requests, and a write per line cost as much as the rest of the access
 * log. Lines still held when the process exits, however it exits
 * (process.exit in the same turn as a fatal line), are written before it ends, after those
 * the destination holds (a write already in flight may still land after them).
 */
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
