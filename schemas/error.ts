import { Type, type Static } from '@sinclair/typebox'

export const ErrorBody = Type.Object({
  error: Type.Integer({ format: 'int32', minimum: 400, maximum: 599, description: 'Numeric error indicator: the HTTP status code' }),
  // Room for the longest text a message quotes: a webhook URL's host.
  message: Type.String({ maxLength: 4096, description: 'Error message text' })
}, { $id: 'Error', additionalProperties: false })

export type ErrorBody = Static<typeof ErrorBody>
