/**
 * Sends a statement through the store's error handling. A named one is parsed once per connection and may keep one plan for
 * every send; `undefined` sends it unnamed, planned afresh each time from its values and the
 * tables' size at that moment (for statements whose best plan moves as a table grows).
 */
export type Query = <R extends object>(name: string | undefined, text: string, values?: unknown[]) => Promise<{ rows: R[] }>

/** Statements of a write, and plain reads: an outage that writes met ends only with a write. */
export interface Queries { read: Query, write: Query }
