import { z } from 'zod'
import { isDatabaseDown, LinksApiError } from '../errors.js'
import type { LinkInputSchemas } from '../links/link-input.js'
import { linkSchema, statsSchema } from '../links/link.openapi.js'
import { linkJson, READ, statsJson, WRITE } from '../links/link.routes.js'
import type { LinkService } from '../links/link.service.js'
import { parseInput } from '../web/parse.js'
import type { WritingApp } from '../../../shared/app-leash.js'

/**
 * The links API as MCP tools (2025-11-25 "tools"): each the twin of a REST route, with that route's
 * scopes, its input checked by the same zod schema (parseInput) and answered through the same
 * service and the same JSON shape. The input schemas below only describe the arguments to clients;
 * the rules (target URL, slug, tags, paging, dates) stay in link-input.ts.
 */

/** The REST answers' JSON, as the OpenAPI document describes it: the tools' output schemas. */
const linkShape = linkSchema.shape
const linkId = z.string().describe('The link id (a UUID), as create_link or list_links answered it.')
const day = z.string().describe('A UTC day, YYYY-MM-DD.')
const tags = z.array(z.string()).describe('Tags, at most 10; case is ignored.')

export interface LinkTool {
  name: string
  title: string
  description: string
  /** The scopes of its REST twin; the MCP endpoint checks them before the call reaches the tool. */
  scopes: readonly string[]
  readOnly: boolean
  inputSchema: z.ZodRawShape
  outputSchema: z.ZodRawShape
  /** `app`: the application calling, from its token (the leash on what it creates; app-leash.ts). */
  run(owner: string, args: Record<string, unknown>, app?: WritingApp): Promise<Record<string, unknown>>
}

/** Present arguments only: a tool's optional argument left out is a REST parameter not sent. */
function given(args: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(names.filter((n) => args[n] !== undefined).map((n) => [n, args[n]]))
}

export function linkTools(links: LinkService, schemas: LinkInputSchemas, publicUrl: string): LinkTool[] {
  const json = (link: Parameters<typeof linkJson>[0]) => linkJson(link, publicUrl)
  const id = (args: Record<string, unknown>) => String(args.id)
  return [
    {
      name: 'create_link',
      title: 'Shorten a URL',
      description: 'Creates a short link to target_url, with an optional custom slug and tags.',
      ...WRITE,
      readOnly: false,
      inputSchema: {
        target_url: z.string().describe('The http(s) URL the short link sends visitors to.'),
        slug: z.string().optional().describe('A custom slug (letters, digits, - and _); random if left out.'),
        tags: tags.optional(),
      },
      outputSchema: linkShape,
      run: async (owner, args, app) =>
        json(
          await links.createLink(
            owner,
            parseInput(schemas.newLink, given(args, ['target_url', 'slug', 'tags'])),
            app,
          ),
        ),
    },
    {
      name: 'list_links',
      title: 'List short links',
      description:
        'The newest short links first, optionally only those with a tag or whose slug, target URL or ' +
        'title contains a text; paged with cursor.',
      ...READ,
      readOnly: true,
      inputSchema: {
        tag: z.string().optional().describe('Only links with this tag.'),
        q: z
          .string()
          .optional()
          .describe(
            'A search: only links whose slug, target URL or title contains this text (any case, 1 to 100 characters).',
          ),
        limit: z.number().int().optional().describe('Links per page, 1 to 100 (default 20).'),
        cursor: z.string().optional().describe('next_cursor of the previous page.'),
      },
      outputSchema: { links: z.array(z.object(linkShape)), next_cursor: z.string().nullable() },
      run: async (owner, args) => {
        // The REST twin's query parameters (limit as its string).
        const query = given({ ...args, limit: args.limit === undefined ? undefined : String(args.limit) }, [
          'tag',
          'q',
          'limit',
          'cursor',
        ])
        const page = await links.listLinks(owner, parseInput(schemas.listQuery, query, 'query'))
        return { links: page.links.map(json), next_cursor: page.nextCursor ?? null }
      },
    },
    {
      name: 'get_link',
      title: 'Read a short link',
      description: 'One short link: its target, tags and click count.',
      ...READ,
      readOnly: true,
      inputSchema: { id: linkId },
      outputSchema: linkShape,
      run: async (owner, args) => json(await links.getLink(owner, id(args))),
    },
    {
      name: 'update_link',
      title: 'Change a short link',
      description: 'Changes the target URL and/or the tags of a short link (its slug stays).',
      ...WRITE,
      readOnly: false,
      inputSchema: { id: linkId, target_url: z.string().optional(), tags: tags.optional() },
      outputSchema: linkShape,
      run: async (owner, args) =>
        json(
          await links.updateLink(
            owner,
            id(args),
            parseInput(schemas.linkChanges, given(args, ['target_url', 'tags'])),
          ),
        ),
    },
    {
      name: 'delete_link',
      title: 'Delete a short link',
      description: 'Deletes a short link: its short URL stops working.',
      ...WRITE,
      readOnly: false,
      inputSchema: { id: linkId },
      outputSchema: { deleted: z.literal(true), id: z.string() },
      run: async (owner, args) => {
        await links.deleteLink(owner, id(args))
        return { deleted: true, id: id(args) }
      },
    },
    {
      name: 'link_stats',
      title: 'Clicks of a short link',
      description: 'Clicks per UTC day over a range (default: the last 30 days), and the total.',
      ...READ,
      readOnly: true,
      inputSchema: { id: linkId, from: day.optional(), to: day.optional() },
      outputSchema: statsSchema.shape,
      run: async (owner, args) =>
        statsJson(
          await links.linkStats(
            owner,
            id(args),
            parseInput(schemas.statsQuery, given(args, ['from', 'to']), 'query'),
          ),
        ),
    },
    {
      name: 'list_tags',
      title: 'List tags',
      description: 'Every tag of the user’s links, with how many links carry it.',
      ...READ,
      readOnly: true,
      inputSchema: {},
      outputSchema: { tags: z.array(z.object({ tag: z.string(), links: z.number().int() })) },
      run: async (owner) => ({ tags: await links.listTags(owner) }),
    },
  ]
}

/**
 * A tool's failure as MCP wants it (tools §"Error Handling"): a result with `isError`, whose text the
 * model can act on. The API's own refusals say what is wrong; anything else says nothing inside.
 */
export function toolError(err: unknown): { isError: true; content: { type: 'text'; text: string }[] } {
  const text =
    err instanceof LinksApiError
      ? `${err.code}: ${err.description}`
      : isDatabaseDown(err)
        ? 'temporarily_unavailable: the service is temporarily unavailable; try again shortly.'
        : 'server_error: the tool failed; try again later.'
  return { isError: true, content: [{ type: 'text', text }] }
}
