import { Type, type Static } from '@sinclair/typebox'

export const ErrorBody = Type.Object({
  error: Type.Integer({ format: 'int32', description: 'Numeric error indicator: the HTTP status code' }),
  message: Type.String({ description: 'Error message text' })
}, { $id: 'Error', additionalProperties: false })

export type ErrorBody = Static<typeof ErrorBody>
