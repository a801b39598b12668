import { DEVICE_CODE_GRANT_TYPE } from '../../clients/grant-types.js'
import { unknownClient } from '../../errors.js'
import { requireParameter } from '../../input/token-parameters.js'
import { namedTokenTarget } from '../resource-targets.js'
import { type GrantType, requireClientId, tokenResponse } from './grant-type.js'

/**
 * RFC 8628 §3.4: device_code + client_id. Each poll is one statement (DeviceAuthorizationService.poll):
 * authorization_pending, slow_down (the interval enforced, 5 s longer each time), expired_token,
 * access_denied, or, once, the tokens.
 */
export const deviceCodeGrant: GrantType = {
  grantType: DEVICE_CODE_GRANT_TYPE,
  async handle(params, services, context) {
    const deviceCode = requireParameter(params, 'device_code')
    const clientId = requireClientId(params)
    if (!services.clients.isAcceptedClientId(clientId)) throw unknownClient()
    // An unknown or disabled resource is refused before the device code is touched.
    const named = await namedTokenTarget(services.resourceServers, params.resource)
    const issued = await services.deviceAuthorizations.poll({
      deviceCode,
      clientId,
      dpopJkt: context.dpopJkt,
    })
    return tokenResponse(services, issued, named, context)
  },
}
