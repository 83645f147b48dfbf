// An agent built on the MCP TypeScript SDK (@modelcontextprotocol/client), unmodified,
// signing in to the running platform and stepping up when a write needs more. Driven by
// tests/e2e/test_mcp_sdks.py: one JSON line per step on stdout; at each of the person's
// steps it prints the authorization URL and reads the redirect the browser landed on
// from stdin.
//
//   node mcp_step_up.mjs <issuer> <redirect_uri> [<client_name>]
//
// Everything OAuth is the SDK's own: an OAuthClientProvider (the interface its
// documentation has an agent implement, here in memory), its `auth()` for the first
// sign-in (what its transports call; the API answers a call without a token
// anonymously, so no 401 starts it), its RFC 9728 and RFC 8414 discovery, dynamic
// registration, scope selection, PKCE and code exchange, and for the step-up the
// Streamable HTTP transport's handling of `403 insufficient_scope` (SEP-2350: the union
// of what it holds and what the challenge names, a new authorization, not a refresh).
// The API is REST, not an MCP server: the transport carries the API's JSON body as its
// message (its POST path is where the SDK's step-up lives; the body is sent as given)
// and reads are made with the SDK's `withOAuth` fetch wrapper.

import { StreamableHTTPClientTransport, UnauthorizedError, auth, withOAuth } from '@modelcontextprotocol/client'
import { randomBytes } from 'node:crypto'
import { createInterface } from 'node:readline'

const [base, redirectUri, clientName = 'MCP TypeScript SDK agent'] = process.argv.slice(2)
const courses = new URL('/api/v1/courses', base)
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()

function emit(step, fields = {}) {
  process.stdout.write(JSON.stringify({ step, ...fields }) + '\n')
}

// Every request the SDK makes, in order (method, path, status): what it discovered, and how.
const seen = []
async function recordingFetch(input, init) {
  const response = await fetch(input, init)
  const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url)
  seen.push({ method: init?.method ?? 'GET', path: url.pathname, status: response.status })
  return response
}
function requestsSince(mark) {
  return seen.slice(mark)
}

// The agent's storage: what the SDK asks it to keep, in memory.
class AgentProvider {
  constructor() {
    this.saved = {}
    this.issuedStates = []
    this.authorizationUrls = []
  }
  get redirectUrl() {
    return redirectUri
  }
  get clientMetadata() {
    return {
      client_name: clientName,
      redirect_uris: [redirectUri],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  state() {
    const state = randomBytes(16).toString('base64url')
    this.issuedStates.push(state)
    return state
  }
  clientInformation() {
    return this.saved.client
  }
  saveClientInformation(info) {
    this.saved.client = info
  }
  tokens() {
    return this.saved.tokens
  }
  saveTokens(tokens) {
    this.saved.tokens = tokens
  }
  redirectToAuthorization(url) {
    // A desktop agent opens the browser here; the test plays the person.
    this.authorizationUrls.push(url)
    emit('authorize', { url: url.href })
  }
  saveCodeVerifier(verifier) {
    this.saved.verifier = verifier
  }
  codeVerifier() {
    return this.saved.verifier
  }
  saveDiscoveryState(state) {
    this.saved.discovery = state
  }
  discoveryState() {
    return this.saved.discovery
  }
}

// The browser's redirect back to the agent: its query, checked for the state this agent sent.
async function callback(provider) {
  const landed = new URL((await lines.next()).value)
  const params = landed.searchParams
  if (params.get('state') !== provider.issuedStates.at(-1)) throw new Error(`state mismatch: ${landed.href}`)
  return params
}

function asked(url) {
  const query = url.searchParams
  return {
    scope: query.get('scope'),
    resource: query.get('resource'),
    code_challenge_method: query.get('code_challenge_method'),
    has_code_challenge: Boolean(query.get('code_challenge')),
  }
}

const provider = new AgentProvider()
const transport = new StreamableHTTPClientTransport(courses, { authProvider: provider, fetch: recordingFetch })
await transport.start()

// 1. The first sign-in: nothing hints at a scope, so the SDK asks for the protected
//    resource's scopes_supported.
let mark = seen.length
const first = await auth(provider, { serverUrl: courses, fetchFn: recordingFetch })
emit('first_redirect', {
  result: first,
  requests: requestsSince(mark),
  registered: {
    client_id: provider.saved.client?.client_id,
    scope: provider.saved.client?.scope ?? null,
  },
  prm_scopes: provider.saved.discovery?.resourceMetadata?.scopes_supported ?? null,
  asked: asked(provider.authorizationUrls.at(-1)),
})
mark = seen.length
await transport.finishAuth(await callback(provider))
const firstTokens = provider.tokens()
emit('signed_in', {
  scope: firstTokens.scope,
  token_type: firstTokens.token_type,
  refresh: Boolean(firstTokens.refresh_token),
  requests: requestsSince(mark),
})

// 2. A read with the SDK's fetch wrapper works with what was granted.
const apiFetch = withOAuth(provider, base)(recordingFetch)
const listed = await apiFetch(new URL('?limit=1', courses))
emit('read', { status: listed.status })
await listed.text()

// 3. A write: the API answers 403 insufficient_scope naming courses:write; the
//    transport asks for the union through a new authorization and throws for the redirect.
const course = { title: `Step-up ${randomBytes(4).toString('hex')}`, slug: `step-up-${randomBytes(6).toString('hex')}` }
mark = seen.length
let refusal = null
try {
  await transport.send(course)
} catch (err) {
  if (!(err instanceof UnauthorizedError)) throw err
  refusal = err.name
}
emit('stepped_up_redirect', {
  thrown: refusal,
  requests: requestsSince(mark),
  authorizations: provider.authorizationUrls.length,
  asked: asked(provider.authorizationUrls.at(-1)),
})
if (refusal === null) {
  // The write went through with what the first sign-in granted: nothing to step up.
  emit('tokens', { first_refresh_token: firstTokens.refresh_token, client_id: provider.saved.client.client_id })
  emit('done')
  process.exit(0)
}
mark = seen.length
await transport.finishAuth(await callback(provider))
const widerTokens = provider.tokens()
emit('stepped_up', {
  scope: widerTokens.scope,
  refresh: Boolean(widerTokens.refresh_token),
  new_refresh: widerTokens.refresh_token !== firstTokens.refresh_token,
  requests: requestsSince(mark),
})

// 4. The retry: the same message through the same transport, now with the wider token.
mark = seen.length
const before = provider.authorizationUrls.length
try {
  await transport.send(course)
  emit('retried', { requests: requestsSince(mark), authorizations: provider.authorizationUrls.length - before })
} catch (err) {
  // Still refused after the step-up: say how, and stop (the test reports it).
  emit('retried', {
    requests: requestsSince(mark),
    authorizations: provider.authorizationUrls.length - before,
    error: `${err.name}: ${err.message}`,
  })
  emit('tokens', { first_refresh_token: firstTokens.refresh_token, client_id: provider.saved.client.client_id })
  emit('done')
  process.exit(0)
}
// The transport reads no body from a message that is not a request: look the course up.
let created = null
let cursor = null
do {
  const page = new URL(courses)
  page.searchParams.set('limit', '100')
  if (cursor) page.searchParams.set('cursor', cursor)
  const listedPage = await apiFetch(page)
  if (listedPage.status !== 200) throw new Error(`listing courses: HTTP ${listedPage.status}`)
  const body = await listedPage.json()
  created = body.items.find((item) => item.slug === course.slug) ?? null
  cursor = body.next_cursor
} while (!created && cursor)
emit('created', { found: Boolean(created), title: created?.title ?? null, sent_title: course.title })

await transport.close()
// What the test checks at the authorization server itself (never logged elsewhere).
emit('tokens', { first_refresh_token: firstTokens.refresh_token, client_id: provider.saved.client.client_id })
emit('done')
process.exit(0)
