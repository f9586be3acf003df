import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// The README and the docs/ pages as the tests read them: their code blocks, each under
// the headings it sits in, and their links and anchors.

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** README.md and every page of docs/, as paths relative to the repository. */
export function pages (): string[] {
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort()
  return ['README.md', ...docs.map((name) => `docs/${name}`)]
}

export function readPage (page: string): string {
  return readFileSync(join(ROOT, page), 'utf8')
}

export interface CodeBlock {
  /** The fence's info string: `ts`, `sh`… or '' */
  lang: string
  code: string
  /** The headings above it, outermost first. */
  headings: string[]
  /** Its fence's line, from 1. */
  line: number
  /** What an HTML comment on the line above it says: `file: map-store.ts`, `not run: it needs Docker`. */
  note?: string
}

interface Parsed { blocks: CodeBlock[], headings: string[], prose: string[] }

// Fences of three backticks or more; a heading is a line of 1 to 6 `#` outside them.
function parse (markdown: string): Parsed {
  const blocks: CodeBlock[] = []
  const headings: string[] = []
  const prose: string[] = []
  const path: string[] = []
  let open: { lang: string, lines: string[], line: number, fence: string, note?: string } | undefined
  const lines = markdown.split('\n')
  for (const [i, line] of lines.entries()) {
    if (open !== undefined) {
      if (line.trimEnd() === open.fence) {
        const note = open.note === undefined ? {} : { note: open.note }
        blocks.push({ lang: open.lang, code: open.lines.join('\n') + '\n', headings: [...path], line: open.line, ...note })
        open = undefined
      } else open.lines.push(line)
      continue
    }
    const fence = /^(`{3,})(\S*)\s*$/.exec(line)
    if (fence !== null) {
      const note = /^<!-- (.+?) -->$/.exec(lines[i - 1]?.trim() ?? '')?.[1]
      open = { lang: fence[2], lines: [], line: i + 1, fence: fence[1], note }
      continue
    }
    const heading = /^(#{1,6}) (.+?)\s*$/.exec(line)
    if (heading !== null) {
      path.length = heading[1].length - 1
      path[heading[1].length - 1] = heading[2]
      headings.push(heading[2])
    } else prose.push(line)
  }
  if (open !== undefined) throw new Error(`the code block at line ${open.line} is not closed`)
  return { blocks, headings, prose }
}

export function codeBlocks (markdown: string): CodeBlock[] {
  return parse(markdown).blocks
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
export function slug (heading: string): string {
  return heading.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')
}

/** Every anchor the page's headings make, repeats numbered as GitHub numbers them. */
export function anchors (markdown: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const heading of parse(markdown).headings) {
    const base = slug(heading)
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

/** The targets of the page's links and images, outside code. */
export function links (markdown: string): string[] {
  const text = parse(markdown).prose.join('\n').replace(/`[^`\n]*`/g, '')
  return [...text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((match) => match[1])
}

/** The rows of the tables under a heading (its own lines up to the next heading), as cells. */
export function tableRows (markdown: string, heading: string): string[][] {
  const lines = markdown.split('\n')
  const start = lines.findIndex((line) => /^#{1,6} /.test(line) && line.replace(/^#+ /, '') === heading)
  if (start === -1) return []
  const end = lines.findIndex((line, i) => i > start && /^#{1,6} /.test(line))
  return lines.slice(start + 1, end === -1 ? undefined : end)
    .filter((line) => line.startsWith('|') && !/^\|[-|: ]+\|$/.test(line))
    // A `|` between spaces parts two cells, an empty one too (`| a | | b |`).
    .map((line) => line.slice(1, -1).split(/(?<= )\|(?= )/).map((cell) => cell.trim()))
}
