import { Migration } from '@mikro-orm/migrations';

// OAuth records whose id is the secret itself (tokens, codes, registration access tokens) were
// stored with that secret in their payload's `jti`; the row id is its hash and the adapter now puts
// `jti` back from the value looked up, so the copy goes. The list is SECRET_ID_MODELS of
// oauth-store.ts as it was when this ran.
export class Migration20261204100000_oauth_secret_ids extends Migration {
  override up(): void {
    this.addSql(
      `update oauth_records set payload = payload - 'jti'
        where model in ('AccessToken', 'AuthorizationCode', 'RefreshToken', 'ClientCredentials', 'RegistrationAccessToken',
                        'InitialAccessToken', 'PushedAuthorizationRequest', 'BackchannelAuthenticationRequest', 'PreAuthorizedCode');`,
    );
  }
}
