import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import type { Test } from 'tap'

// A walkthrough of curl commands in a page (the README's, docs/plugin.md's), run against a
// service: each step's status, headers and body as the page shows them.

const run = promisify(execFile)

/** The base URL the walkthroughs call: a test puts its own service's in its place. */
export const EXAMPLE_BASE = 'http://127.0.0.1:3000'

export interface Step {
  /** The comment above the command: `# 200: created`, the status first. */
  status: number
  title: string
  command: string
  /** The `# …` lines under the command: a header (`Name: value`) or the body. */
  shown: string[]
}

/** The walkthrough's variables (`TOKEN=value  # comment` lines) and its steps. */
export function steps (code: string): { variables: Record<string, string>, steps: Step[] } {
  const variables: Record<string, string> = {}
  const parsed: Step[] = []
  for (const chunk of code.trim().split(/\n\s*\n/)) {
    const lines = chunk.split('\n')
    if (lines.every((line) => /^[A-Z_]+=/.test(line))) {
      for (const line of lines) {
        const [, name, value] = /^([A-Z_]+)=(\S*)/.exec(line) as RegExpExecArray
        variables[name] = value
      }
      continue
    }
    const title = lines.shift() as string
    const status = /^# (\d{3})\b/.exec(title)
    if (status === null) throw new Error(`a step starts with "# <status>": ${title}`)
    const command: string[] = []
    while (lines.length > 0 && !lines[0].startsWith('#')) command.push(lines.shift() as string)
    if (command.length === 0) throw new Error(`no command under ${title}`)
    const shown = lines.map((line) => {
      if (!line.startsWith('# ')) throw new Error(`under ${title}, "${line}" is not "# " and what the command shows`)
      return line.slice(2)
    })
    parsed.push({ status: Number(status[1]), title, command: command.join('\n'), shown })
  }
  return { variables, steps: parsed }
}

/** `curl -i`'s output: the last status line and its headers (after any `100 Continue`), and the body. */
function answer (output: string): { status: number, headers: Map<string, string>, body: string } {
  let rest = output
  let head: RegExpExecArray | null
  let last: RegExpExecArray | undefined
  while ((head = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n((?:[^\r\n]+\r\n)*)\r\n/.exec(rest)) !== null) {
    last = head
    rest = rest.slice(head[0].length)
  }
  if (last === undefined) throw new Error(`not an HTTP answer: ${output}`)
  const headers = new Map(last[2].split('\r\n').filter((line) => line !== '').map((line) => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
  }))
  return { status: Number(last[1]), headers, body: rest }
}

export async function hasCurl (): Promise<boolean> {
  try {
    await run('curl', ['--version'])
    return true
  } catch {
    return false
  }
}

/** Runs the steps against `base`, with `env` for their variables, and checks what each shows. */
export async function walk (t: Test, walkthrough: Step[], base: string, env: Record<string, string> = {}): Promise<void> {
  // A cursor is sealed with a key each database makes for itself: the README's stands for the one this run's service gives.
  const cursors = new Map<string, string>()
  for (const step of walkthrough) {
    t.ok(step.command.includes(EXAMPLE_BASE), `${step.title}: the command calls ${EXAMPLE_BASE}`)
    let command = step.command.replaceAll(EXAMPLE_BASE, base)
    for (const [shown, given] of cursors) command = command.replaceAll(`cursor=${shown}`, `cursor=${given}`)
    const { stdout } = await run('sh', ['-c', command], { env: { PATH: process.env.PATH, ...env }, maxBuffer: 4 * 1024 * 1024 })
    const seen = answer(stdout)
    t.equal(seen.status, step.status, step.title)
    const body = step.shown.filter((line) => !/^[A-Za-z-]+: /.test(line))
    t.ok(body.length <= 1, `${step.title}: one line of body at most`)
    t.equal(seen.body, body[0] ?? '', `${step.title}: the body`)
    for (const line of step.shown.filter((line) => /^[A-Za-z-]+: /.test(line))) {
      const [name, value] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]
      const header = seen.headers.get(name.toLowerCase())
      const shown = /cursor=([A-Za-z0-9_-]+)/.exec(value)
      const given = header === undefined ? null : /cursor=([A-Za-z0-9_-]+)/.exec(header)
      if (shown !== null && given !== null) {
        t.equal(given[1].length, shown[1].length, `${step.title}: a cursor as long as the page's`)
        cursors.set(shown[1], given[1])
      }
      t.equal(header?.replace(/cursor=[A-Za-z0-9_-]+/, `cursor=${shown?.[1]}`), value, `${step.title}: ${name}`)
    }
  }
}
