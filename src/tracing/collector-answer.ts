/** A collector's answer to one export, read off the connection. */
export interface CollectorAnswer {
  status: number
  reason: string
  retryAfter?: string
  body: Buffer
  /** Whether the connection can carry the next export. */
  keepAlive: boolean
}

// The answers' own limit in @opentelemetry/otlp-exporter-base, and a bound for their heads.
export const MAX_BODY = 4 * 1024 * 1024
const MAX_HEAD = 64 * 1024

const CRLF = Buffer.from('\r\n')
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-5]\d\d)(?: (.*))?$/

interface Head extends Omit<CollectorAnswer, 'body'> {
  /** The body's length; undefined when it is chunked or runs to the connection's end. */
  length?: number
  chunked: boolean
}

/**
 * Reads an HTTP/1.1 answer as it arrives: a length, chunked, or to the connection's end;
 * interim (1xx) answers are skipped. Throws on one it cannot read or whose body is too long.
 */
export class AnswerReader {
  private buffered: Buffer = Buffer.alloc(0)
  private head: Head | undefined
  private readonly body: Buffer[] = []
  private size = 0
  // Chunked: the bytes left of the current chunk, or undefined when its size line comes next;
  // and whether the last (empty) chunk has come, so that only trailers and a blank line are left.
  private chunkLeft: number | undefined
  private lastChunk = false

  /** The whole answer once `chunk` completes it. */
  push (chunk: Buffer): CollectorAnswer | undefined {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    while (this.head === undefined) {
      const end = this.buffered.indexOf('\r\n\r\n')
      if (end === -1) {
        if (this.buffered.length > MAX_HEAD) throw new Error('the collector answered with a head over 64 KiB')
        return undefined
      }
      const head = readHead(this.buffered.toString('latin1', 0, end))
      this.buffered = this.buffered.subarray(end + 4)
      if (head.status >= 200) this.head = head
    }
    const { head } = this
    if (head.chunked) return this.chunks()
    if (head.length === undefined) {
      this.take(this.buffered)
      this.buffered = Buffer.alloc(0)
      return undefined
    }
    const part = this.buffered.subarray(0, head.length - this.size)
    this.take(part)
    this.buffered = this.buffered.subarray(part.length)
    // Anything past the body was not asked for: the connection is not trusted with another export.
    return this.size === head.length ? this.answer(this.buffered.length > 0) : undefined
  }

  /** The answer the connection's end completes, if it does. */
  end (): CollectorAnswer | undefined {
    return this.head !== undefined && !this.head.chunked && this.head.length === undefined ? this.answer(true) : undefined
  }

  private chunks (): CollectorAnswer | undefined {
    for (;;) {
      if (this.chunkLeft === undefined) {
        const line = this.buffered.indexOf(CRLF)
        if (line === -1) return undefined
        const size = this.buffered.toString('latin1', 0, line).split(';')[0].trim()
        if (!/^[0-9a-fA-F]{1,8}$/.test(size)) throw new Error('the collector answered with a chunk it cannot be read')
        this.buffered = this.buffered.subarray(line + 2)
        this.chunkLeft = parseInt(size, 16)
        this.lastChunk = this.chunkLeft === 0
      }
      if (this.lastChunk) {
        // The last chunk: the answer ends with the blank line after any trailers.
        const bare = this.buffered.subarray(0, 2).equals(CRLF)
        const end = bare ? 2 : this.buffered.indexOf('\r\n\r\n') + 4
        return end < 4 && !bare ? undefined : this.answer(this.buffered.length > end)
      }
      const part = this.buffered.subarray(0, this.chunkLeft)
      this.take(part)
      this.chunkLeft -= part.length
      this.buffered = this.buffered.subarray(part.length)
      if (this.chunkLeft > 0 || this.buffered.length < 2) return undefined
      if (!this.buffered.subarray(0, 2).equals(CRLF)) throw new Error('the collector answered with a chunk it cannot be read')
      this.buffered = this.buffered.subarray(2)
      this.chunkLeft = undefined
    }
  }

  private take (part: Buffer): void {
    if (part.length === 0) return
    this.size += part.length
    if (this.size > MAX_BODY) throw new Error(`OTLP export response body exceeded size limit of ${MAX_BODY} bytes`)
    this.body.push(part)
  }

  private answer (excess: boolean): CollectorAnswer {
    const { length: _length, chunked: _chunked, ...head } = this.head as Head
    return { ...head, keepAlive: head.keepAlive && !excess, body: Buffer.concat(this.body) }
  }
}

function readHead (text: string): Head {
  const [statusLine, ...lines] = text.split('\r\n')
  const status = STATUS_LINE.exec(statusLine)
  if (status === null) throw new Error('the collector did not answer in HTTP/1.1')
  const fields = new Map<string, string>()
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon < 1) throw new Error('the collector answered with a header it cannot be read')
    fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  const code = Number(status[2])
  const connection = fields.get('connection')?.toLowerCase()
  const chunked = /(?:^|,)\s*chunked\s*$/i.test(fields.get('transfer-encoding') ?? '')
  const length = fields.get('content-length')
  if (length !== undefined && !/^\d{1,10}$/.test(length)) throw new Error('the collector answered with a length it cannot be read')
  // No body at all, one of a length, or one that runs to the connection's end.
  const bodyLength = code === 204 || code === 304 ? 0 : chunked ? undefined : length === undefined ? undefined : Number(length)
  return {
    status: code,
    reason: status[3] ?? '',
    retryAfter: fields.get('retry-after'),
    keepAlive: (status[1] === '1' ? connection !== 'close' : connection === 'keep-alive') && (chunked || bodyLength !== undefined),
    length: bodyLength,
    chunked
  }
}
