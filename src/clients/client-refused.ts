/** Why a client_id names no usable client: shown on the error page, never a secret. */
export class ClientRefused extends Error {
  override name = 'ClientRefused'
}
