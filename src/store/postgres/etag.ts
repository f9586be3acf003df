/** plantEtag (../etag.ts) in SQL, over the columns `name` and `tag`: a statement checks If-Match on the row it writes. */
export function etagSql (name: string, tag: string): string {
  const bytes = `convert_to(${name}, 'UTF8') || CASE WHEN ${tag} IS NULL THEN decode('00', 'hex') ELSE decode('0000', 'hex') || convert_to(${tag}, 'UTF8') END`
  return `rtrim(translate(encode(sha256(${bytes}), 'base64'), '+/', '-_'), '=')`
}

/** A write's If-Match (or If-None-Match) as the statements take it. */
export function matchText (tags: readonly string[] | undefined): string | null {
  return tags === undefined ? null : tags.filter((tag) => /^[\w-]{43}$/.test(tag)).join(' ')
}
