/** Sends a statement through the store's error handling. */
export type Query = <R extends object>(name: string | undefined, text: string, values?: unknown[]) => Promise<{ rows: R[] }>

/** Statements of a write, and plain reads: an outage that writes met ends only with a write. */
export interface Queries { read: Query, write: Query }
