import { pathParameter } from '../../../shared/openapi.js'
import {
  ECOM,
  type Json,
  json,
  nullable,
  operation,
  writeOperation,
  pageParameters,
  problem,
  time,
} from '../web/openapi.js'

/**
 * The link routes (link.routes.ts) in the OpenAPI document: links, their statistics and
 * campaigns, and the short URL they redirect from.
 */

const day = { type: 'string', format: 'date', description: 'A UTC day, YYYY-MM-DD.' }
const statsParameters = [
  {
    name: 'from',
    in: 'query',
    required: false,
    schema: day,
    description: 'First day (default: 29 days before `to`).',
  },
  {
    name: 'to',
    in: 'query',
    required: false,
    schema: day,
    description: 'Last day (default: today, UTC). At most 366 days.',
  },
]

const utm = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(
    ['source', 'medium', 'campaign', 'term', 'content'].map((k) => [
      k,
      nullable({ type: 'string', maxLength: 200 }),
    ]),
  ),
}
const revenue = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['currency', 'value_minor', 'value'],
    properties: {
      currency: { type: 'string' },
      value_minor: { type: 'string', pattern: '^\\d+$', description: 'Sum in minor units, as a string.' },
      value: { type: 'string', description: 'Sum in major units.' },
    },
  },
}
const statsProperties = {
  from: { type: 'string', format: 'date' },
  to: { type: 'string', format: 'date' },
  clicks: { type: 'integer' },
  conversions: { type: 'integer' },
  conversion_rate: nullable({
    type: 'number',
    description: 'conversions / clicks, 4 decimals; null without clicks.',
  }),
  revenue,
  days: {
    type: 'array',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['date', 'clicks', 'conversions', 'revenue'],
      properties: {
        date: { type: 'string', format: 'date' },
        clicks: { type: 'integer' },
        conversions: { type: 'integer' },
        revenue,
      },
    },
  },
}
const statsRequired = ['from', 'to', 'clicks', 'conversions', 'conversion_rate', 'revenue', 'days']

const Link: Json = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'slug',
    'short_url',
    'product_id',
    'target_url',
    'campaign',
    'utm',
    'clicks',
    'created_at',
    'archived_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    slug: { type: 'string' },
    short_url: { type: 'string', format: 'uri' },
    product_id: nullable({ type: 'string' }),
    target_url: { type: 'string', format: 'uri' },
    campaign: nullable({ type: 'string' }),
    utm: { ...utm, required: ['source', 'medium', 'campaign', 'term', 'content'] },
    clicks: { type: 'integer' },
    created_at: time,
    archived_at: {
      ...nullable(time),
      description: 'When it was archived (its short URL answers 410), or null.',
    },
  },
}

const NewLink: Json = {
  type: 'object',
  additionalProperties: false,
  description: 'Give exactly one of product_id and target_url.',
  properties: {
    product_id: { type: 'string', minLength: 1, maxLength: 200 },
    target_url: { type: 'string', format: 'uri', maxLength: 2048 },
    slug: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{1,62}[A-Za-z0-9]$' },
    campaign: { type: 'string', minLength: 1, maxLength: 100 },
    utm: utm,
  },
}

const LinkChanges: Json = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    campaign: nullable({ type: 'string', minLength: 1, maxLength: 100 }),
    utm: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(
        ['source', 'medium', 'campaign', 'term', 'content'].map((k) => [
          k,
          nullable({ type: 'string', minLength: 1, maxLength: 200 }),
        ]),
      ),
    },
    archived: { type: 'boolean', description: 'true archives the link, false brings it back.' },
  },
}

const LinkPage: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['links', 'next_cursor'],
  properties: { links: { type: 'array', items: Link }, next_cursor: nullable({ type: 'string' }) },
}

const LinkStats: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['link_id', 'campaign', ...statsRequired],
  properties: {
    link_id: { type: 'string', format: 'uuid' },
    campaign: nullable({ type: 'string' }),
    ...statsProperties,
  },
}

const CampaignStats: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['campaign', 'links', ...statsRequired],
  properties: { campaign: { type: 'string' }, links: { type: 'integer' }, ...statsProperties },
}

const CampaignList: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['campaigns'],
  properties: {
    campaigns: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['campaign', 'links'],
        properties: { campaign: { type: 'string' }, links: { type: 'integer' } },
      },
    },
  },
}

export function linkOpenApiPaths() {
  return {
    '/api/links': {
      post: writeOperation(
        ECOM,
        {
          summary: 'Create an e-commerce link',
          operationId: 'createLink',
          tags: ['Links'],
          requestBody: { required: true, content: json(NewLink) },
        },
        {
          '201': { description: 'The link.', content: json(Link) },
          '409': problem('The slug is taken.'),
          '413': problem('The body is larger than 16 KiB.'),
          '415': problem('The body is not application/json.'),
          '422': problem('`product_id` names no product of this user’s catalogue.'),
        },
      ),
      get: operation(
        ECOM,
        {
          summary: 'List e-commerce links, newest first',
          operationId: 'listLinks',
          tags: ['Links'],
          parameters: [
            {
              name: 'campaign',
              in: 'query',
              required: false,
              schema: { type: 'string', maxLength: 100 },
              description: 'Only this campaign’s links.',
            },
            {
              name: 'state',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: ['active', 'archived', 'all'], default: 'active' },
              description: 'Links not archived (default), archived ones, or both.',
            },
            ...pageParameters(100, 20),
          ],
        },
        { '200': { description: 'A page.', content: json(LinkPage) } },
      ),
    },
    '/api/links/{id}': {
      get: operation(
        ECOM,
        {
          summary: 'Read an e-commerce link',
          operationId: 'getLink',
          tags: ['Links'],
          parameters: [pathParameter('id', 'The link’s id.')],
        },
        {
          '200': { description: 'The link.', content: json(Link) },
          '404': problem('No link of this user has this id.'),
        },
      ),
      patch: writeOperation(
        ECOM,
        {
          summary: 'Change the campaign or UTM values of an e-commerce link, or archive it',
          description:
            'Each named value replaces the old one; null clears it. The target and slug never change. ' +
            '`archived: true` ends the link: its short URL answers 410 and counts nothing, its slug stays taken, ' +
            'and its clicks, conversions (reported later too) and statistics stay. `archived: false` brings it back. ' +
            'Links are never deleted.',
          operationId: 'updateLink',
          tags: ['Links'],
          parameters: [pathParameter('id', 'The link’s id.')],
          requestBody: { required: true, content: json(LinkChanges) },
        },
        {
          '200': { description: 'The link.', content: json(Link) },
          '404': problem('No link of this user has this id.'),
          '413': problem('The body is larger than 16 KiB.'),
          '415': problem('The body is not application/json.'),
        },
      ),
    },
    '/api/links/{id}/stats': {
      get: operation(
        ECOM,
        {
          summary: 'Statistics of a link by UTC day',
          operationId: 'linkStats',
          tags: ['Links'],
          parameters: [pathParameter('id', 'The link’s id.'), ...statsParameters],
        },
        {
          '200': {
            description: 'Clicks, conversions, rate, revenue per currency.',
            content: json(LinkStats),
          },
          '404': problem('No link of this user has this id.'),
        },
      ),
    },
    '/api/campaigns': {
      get: operation(
        ECOM,
        { summary: 'List campaigns', operationId: 'listCampaigns', tags: ['Links'] },
        {
          '200': {
            description: 'Every campaign with its number of links.',
            content: json(CampaignList),
          },
        },
      ),
    },
    '/api/campaigns/{campaign}/stats': {
      get: operation(
        ECOM,
        {
          summary: 'Statistics of a campaign by UTC day',
          operationId: 'campaignStats',
          tags: ['Links'],
          parameters: [pathParameter('campaign', 'The campaign name (URL-encoded).'), ...statsParameters],
        },
        {
          '200': { description: 'Over all the campaign’s links.', content: json(CampaignStats) },
          '404': problem('No link of this user has this campaign.'),
        },
      ),
    },
  }
}

/** GET /{slug}: the short URL (link.routes.ts), no token. */
export function redirectOpenApiPaths() {
  return {
    '/{slug}': {
      get: {
        summary: 'Follow an e-commerce short link',
        description:
          'Records a click and redirects to the product with the link’s UTM parameters and the click id in the `lclid` query parameter. ' +
          'HEAD answers the same redirect without a click id and counts nothing.',
        operationId: 'followLink',
        tags: ['Public'],
        security: [],
        parameters: [pathParameter('slug', 'The link’s slug (any case).')],
        responses: {
          '302': {
            description: 'To the product.',
            headers: {
              Location: { description: 'The target with utm_* and lclid.', schema: { type: 'string' } },
            },
          },
          '404': {
            description: 'No such link: a page.',
            content: { 'text/html': {} },
          },
          '410': {
            description: 'The link was archived by its owner: a page. Nothing is counted.',
            content: { 'text/html': {} },
          },
        },
      },
    },
  }
}
