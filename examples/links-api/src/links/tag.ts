/** A tag: 1 to 32 lower-case letters, digits, `-` or `_` (input is lower-cased first). */
export const TAG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/
export const MAX_TAGS_PER_LINK = 10

export function normalizeTag(tag: string): string {
  return tag.trim().toLowerCase()
}

export function tagProblem(tag: string): string | undefined {
  return TAG_PATTERN.test(tag)
    ? undefined
    : '1 to 32 letters, digits, "-" or "_", starting with a letter or digit'
}
