/** An OpenAPI path parameter: a required string, as every example API's routes name them. */
export const pathParameter = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description,
})
