import { statSync } from 'node:fs'
import { StoreUnavailableError } from '../types.js'

function identity (path: string): string | undefined {
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false })
  return stat === undefined ? undefined : `${stat.dev}:${stat.ino}`
}

/** Remembers which files (device and inode) the database and its WAL were when the store opened them. */
export function fileIdentity (path: string): () => void {
  if (path === ':memory:') return () => {}
  // The WAL exists once the database has been opened in WAL mode and migrated.
  const files = [path, `${path}-wal`].map((file) => ({ file, opened: identity(file) })).filter(({ opened }) => opened !== undefined)
  return function verify (): void {
    for (const { file, opened } of files) {
      const now = identity(file)
      if (now !== opened) {
        // The old WAL would be replayed into a file put in its place: the operator removes it first.
        throw new StoreUnavailableError(`${file} was ${now === undefined ? 'deleted' : 'replaced'} while the store had it open: ` +
          `nothing is written until a restart; remove ${path}-wal and ${path}-shm (they belong to the old file) before it`)
      }
    }
  }
}
