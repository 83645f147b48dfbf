// A public client using DPoP (RFC 9449) through panva's oauth4webapi, unmodified, against
// the running platform. Driven by tests/e2e/test_dpop_client.py: it prints one JSON line
// per step on stdout; at the person's step it prints the authorization URL and reads the
// redirect the browser landed on from stdin.
//
//   node dpop_flow.mjs <issuer> <redirect_uri>

import * as oauth from 'oauth4webapi'
import { createInterface } from 'node:readline'

const [issuerArg, redirectUri] = process.argv.slice(2)
const issuer = new URL(issuerArg)
const insecure = { [oauth.allowInsecureRequests]: true } // the platform listens on loopback http
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()

function emit(step, fields = {}) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + '\n')
}

// RFC 9449 §8: a server may ask for a nonce; the library caches it, the client retries once.
async function withNonceRetry(request) {
  try {
    return await request()
  } catch (err) {
    if (oauth.isDPoPNonceError(err)) return await request()
    throw err
  }
}

function refusal(err) {
  if (err instanceof oauth.ResponseBodyError) return { status: err.status, error: err.error }
  if (err instanceof oauth.WWWAuthenticateChallengeError) {
    return { status: err.status, challenges: err.cause.map((c) => ({ scheme: c.scheme, ...c.parameters })) }
  }
  throw err
}

const as = await oauth.processDiscoveryResponse(
  issuer,
  await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
)
emit('discovered', { dpop_signing_alg_values_supported: as.dpop_signing_alg_values_supported })

const client = await oauth.processDynamicClientRegistrationResponse(
  await oauth.dynamicClientRegistrationRequest(
    as,
    {
      client_name: 'oauth4webapi DPoP test',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
      dpop_bound_access_tokens: true,
    },
    insecure,
  ),
)
emit('registered', { client_id: client.client_id, dpop_bound_access_tokens: client.dpop_bound_access_tokens })
const clientAuth = oauth.None()

const keyPair = await oauth.generateKeyPair('ES256', { extractable: true })
const DPoP = oauth.DPoP(client, keyPair)
const jkt = await DPoP.calculateThumbprint()

const codeVerifier = oauth.generateRandomCodeVerifier()
const state = oauth.generateRandomState()
const authorizationUrl = new URL(as.authorization_endpoint)
for (const [name, value] of Object.entries({
  response_type: 'code',
  client_id: client.client_id,
  redirect_uri: redirectUri,
  scope: 'openid profile courses:read',
  code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
  code_challenge_method: 'S256',
  state,
  dpop_jkt: jkt, // RFC 9449 §10: the code is bound to this key
})) {
  authorizationUrl.searchParams.set(name, value)
}
emit('authorize', { url: authorizationUrl.href, jkt })

const callback = new URL((await lines.next()).value)
const params = oauth.validateAuthResponse(as, client, callback, state)
const tokens = await withNonceRetry(async () =>
  oauth.processAuthorizationCodeResponse(
    as,
    client,
    await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, redirectUri, codeVerifier, {
      DPoP,
      ...insecure,
    }),
  ),
)
emit('exchanged', { token_type: tokens.token_type, scope: tokens.scope, refresh: Boolean(tokens.refresh_token) })

const courses = new URL('/api/v1/courses?limit=2', issuer)
const listed = await withNonceRetry(() =>
  oauth.protectedResourceRequest(tokens.access_token, 'GET', courses, undefined, undefined, { DPoP, ...insecure }),
)
emit('resource', { status: listed.status, items: (await listed.json()).items.length })

const info = await withNonceRetry(async () =>
  oauth.processUserInfoResponse(
    as,
    client,
    oauth.skipSubjectCheck,
    await oauth.userInfoRequest(as, client, tokens.access_token, { DPoP, ...insecure }),
  ),
)
emit('userinfo', { sub: info.sub, name: info.name })

try {
  // No DPoP handle: the library sends the bound token with the Bearer scheme.
  await oauth.protectedResourceRequest(tokens.access_token, 'GET', courses, undefined, undefined, insecure)
  emit('bearer_misuse', { status: 200 })
} catch (err) {
  emit('bearer_misuse', refusal(err))
}

const refreshed = await withNonceRetry(async () =>
  oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token, { DPoP, ...insecure }),
  ),
)
emit('refreshed', { token_type: refreshed.token_type, rotated: refreshed.refresh_token !== tokens.refresh_token })

const otherKey = oauth.DPoP(client, await oauth.generateKeyPair('ES256', { extractable: true }))
try {
  await withNonceRetry(async () =>
    oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token, {
        DPoP: otherKey,
        ...insecure,
      }),
    ),
  )
  emit('other_key', { status: 200 })
} catch (err) {
  emit('other_key', refusal(err))
}

// The refusal consumed nothing: the right key still refreshes.
const again = await withNonceRetry(async () =>
  oauth.processRefreshTokenResponse(
    as,
    client,
    await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token, { DPoP, ...insecure }),
  ),
)
const stillListed = await withNonceRetry(() =>
  oauth.protectedResourceRequest(again.access_token, 'GET', courses, undefined, undefined, { DPoP, ...insecure }),
)
emit('refreshed_again', { token_type: again.token_type, status: stillListed.status })
emit('done')
process.exit(0)
