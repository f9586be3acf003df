/** What a token may do. */
export const SCOPES = ['plants:read', 'plants:write', 'webhooks', 'metrics', 'events:read'] as const

export type Scope = typeof SCOPES[number]

/** A token with the scopes it is limited to; a token given as a plain string has every scope. */
export interface ScopedToken {
  token: string
  scopes: readonly Scope[]
}

export function isScope (value: unknown): value is Scope {
  return (SCOPES as readonly unknown[]).includes(value)
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a token needs for this route. */
    scope?: Scope
  }
}
