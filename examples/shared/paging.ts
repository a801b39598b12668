/**
 * A page from rows read with `limit + 1` (one more than asked tells whether another page follows,
 * without a count): the first `limit` rows, and the cursor after the last of them when more follow.
 */
export function pageOf<T>(
  rows: readonly T[],
  limit: number,
  cursorAfter: (last: T) => string,
): { items: T[]; nextCursor: string | undefined } {
  const items = rows.slice(0, limit)
  const last = items.at(-1)
  return { items, nextCursor: rows.length > limit && last !== undefined ? cursorAfter(last) : undefined }
}
