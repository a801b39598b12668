import { createParty, exchangeCode, type Party } from '../../../test/helpers/fixtures.js'
import { linksBase, t } from './mcp-services.js'

/**
 * The people and applications of the leash tests (app-leash.test.ts, import-leash.test.ts), on the
 * services of useMcpServices: an application of each kind (and standing), and its real tokens.
 */
export type Kind = 'registered' | 'metadata_document' | 'dynamic'

/** A person and an application of this kind (the operator's override, if given), holding a grant. */
export async function partyOfKind(
  kind: Kind,
  override: 'verified' | 'unverified' | null = null,
): Promise<Party> {
  const party = await createParty(t)
  await t.database.db
    .updateTable('clients')
    .set({ kind, standing_override: override })
    .where('id', '=', party.client.id)
    .execute()
  return party
}

/** An access token for the REST API (or /mcp) from the real token endpoint. */
export const tokenOf = async (party: Party, resource = `${linksBase}/api`) =>
  (await exchangeCode(t, party, resource)).access_token
