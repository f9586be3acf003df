/**
 * The entity tag of the plant whose columns are `name` and `tag`, in SQL: the bytes plantEtag (../etag.ts)
 * hashes, hashed and written the same way, so that a statement checks If-Match on the row it is about to
 * write.
 */
export function etagSql (name: string, tag: string): string {
  const bytes = `convert_to(${name}, 'UTF8') || CASE WHEN ${tag} IS NULL THEN decode('00', 'hex') ELSE decode('0000', 'hex') || convert_to(${tag}, 'UTF8') END`
  return `rtrim(translate(encode(sha256(${bytes}), 'base64'), '+/', '-_'), '=')`
}

/** A write's If-Match (or If-None-Match) as the statements take it. */
export function matchText (tags: readonly string[] | undefined): string | null {
  return tags === undefined ? null : tags.filter((tag) => /^[\w-]{43}$/.test(tag)).join(' ')
}
