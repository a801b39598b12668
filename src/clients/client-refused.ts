/** Why a client_id names no usable client: shown on the error page, never a secret. */
export class ClientRefused extends Error {
  override name = 'ClientRefused'
}

/** The client_id may well be fine, but cannot be checked now (the server is busy): try again later. */
export class ClientUnavailable extends Error {
  override name = 'ClientUnavailable'
}
