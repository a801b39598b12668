import { pathParameter } from '../../../shared/openapi.js'
import {
  currency,
  decimal,
  ECOM,
  type Json,
  json,
  minor,
  operation,
  writeOperation,
  problem,
  time,
} from '../web/openapi.js'

/** The conversion routes (conversion.routes.ts) in the OpenAPI document. */

const NewConversion: Json = {
  type: 'object',
  additionalProperties: false,
  required: ['click_id', 'order_id', 'currency'],
  description: 'Give exactly one of value and value_minor. occurred_at defaults to now.',
  properties: {
    click_id: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{22}$',
      description: 'The lclid the redirect added.',
    },
    order_id: { type: 'string', minLength: 1, maxLength: 200 },
    value: decimal,
    value_minor: minor,
    currency,
    occurred_at: time,
  },
}

const Conversion: Json = {
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'order_id',
    'click_id',
    'link_id',
    'value',
    'value_minor',
    'currency',
    'occurred_at',
    'created_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    order_id: { type: 'string' },
    click_id: { type: 'string' },
    link_id: { type: 'string', format: 'uuid' },
    value: { type: 'string' },
    value_minor: { type: 'integer' },
    currency: { type: 'string' },
    occurred_at: time,
    created_at: time,
  },
}

export function conversionOpenApiPaths() {
  return {
    '/api/conversions': {
      post: writeOperation(
        ECOM,
        {
          summary: 'Report a conversion',
          description:
            'Idempotent by order id: the same report again answers 200 with the same body; other values for the same order id answer 409.',
          operationId: 'reportConversion',
          tags: ['Conversions'],
          requestBody: { required: true, content: json(NewConversion) },
        },
        {
          '200': { description: 'Reported before with the same values.', content: json(Conversion) },
          '201': { description: 'Recorded.', content: json(Conversion) },
          '409': problem('A conversion for this order id was reported with other values.'),
          '413': problem('The body is larger than 16 KiB.'),
          '415': problem('The body is not application/json.'),
          '422': problem('`click_id` names no click on this user’s links (unknown, or another user’s).'),
        },
      ),
    },
    '/api/conversions/{order_id}': {
      get: operation(
        ECOM,
        {
          summary: 'Read a conversion by order id',
          operationId: 'getConversion',
          tags: ['Conversions'],
          parameters: [pathParameter('order_id', 'The shop’s order id (URL-encoded).')],
        },
        {
          '200': { description: 'The conversion.', content: json(Conversion) },
          '404': problem('No conversion of this user has this order id.'),
        },
      ),
    },
  }
}
