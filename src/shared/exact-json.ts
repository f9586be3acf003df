// src/shared: what every layer and the client import: exact int64 JSON, ids, scopes.

import { readJson } from './read-json.js'

// The exact int64 JSON path that the service and the client share.

// A double may misjudge a literal only when it has 16 significant digits or more.
const RISKY = /\d(?:\.?\d){15}|\d[eE]/

/** Whether a number literal of this JSON text could be misread by JSON.parse (a cheap look at the text). */
export function mayRound (text: string): boolean {
  return RISKY.test(text)
}

/** Parses a JSON text deciding every number by its exact decimal value. */
export function parseExact (text: string): unknown {
  return mayRound(text) ? readJson(text) : JSON.parse(text)
}

/** JSON.stringify, except that a BigInt is written as the integer it is (where JSON.stringify throws). */
export function stringifyExact (value: unknown): string {
  return write(value) ?? 'null'
}

function write (value: unknown): string | undefined {
  if (typeof value === 'bigint') return value.toString()
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const toJSON = (value as { toJSON?: unknown }).toJSON
  if (typeof toJSON === 'function') return write(toJSON.call(value))
  if (Array.isArray(value)) return `[${value.map((item) => write(item) ?? 'null').join(',')}]`
  const members: string[] = []
  for (const [key, item] of Object.entries(value)) {
    const text = write(item)
    if (text !== undefined) members.push(`${JSON.stringify(key)}:${text}`)
  }
  return `{${members.join(',')}}`
}
