/** The rows of the first markdown table after `heading`: cells of each body row, trimmed. */
export function tableAfter(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(heading)
  if (start < 0) throw new Error(`no heading ${heading}`)
  const lines = markdown.slice(start).split('\n')
  const first = lines.findIndex((l) => l.startsWith('|'))
  const rows: string[][] = []
  for (const line of lines.slice(first + 2)) {
    if (!line.startsWith('|')) break
    rows.push(
      line
        .slice(1, -1)
        .split('|')
        .map((c) => c.trim()),
    )
  }
  return rows
}
