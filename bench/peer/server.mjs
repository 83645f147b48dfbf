// The peer that `make bench` measures side by side with the platform: oidc-provider
// (the exact version pinned in bench/package.json), configured the way a deployment of
// it that matches ours would be: authorization code with PKCE S256 required, resource
// indicators with a JWT access-token audience (ES256, ten minutes) and an opaque one for
// resource servers that introspect, refresh tokens rotated on every use, RS256 ID tokens,
// a public client for the flows and a confidential client (client_secret_post) that
// introspects. Keys are generated at start. Storage (PEER_STORE): `memory`, oidc-provider's
// own in-memory adapter, its store sized so that nothing the bench minted is evicted during
// a run; or `redis`, the durable peer: our Redis adapter (redis_adapter.mjs, on ioredis, as
// a deployment of oidc-provider writes one) on PEER_REDIS_URL, its keys under
// PEER_REDIS_PREFIX.
//
// Environment: PEER_PORT (required), PEER_RS_SECRET (the introspecting client's secret),
// PEER_STORE (memory, the default, or redis), PEER_REDIS_URL and PEER_REDIS_PREFIX (redis),
// BENCH_MINT_TOKEN (enables POST /__bench/mint, see mint() below; never set in use).

import * as crypto from 'node:crypto';
import * as http from 'node:http';

import { Redis } from 'ioredis';
import Provider from 'oidc-provider';
// The shipped in-memory adapter and its store, used as they are; only the store's size
// is ours (the default keeps about a thousand entries, fewer than one bench round mints).
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';

import RedisAdapter from './redis_adapter.mjs';

const port = Number(process.env.PEER_PORT);
if (!port) throw new Error('PEER_PORT is required');
const issuer = `http://127.0.0.1:${port}`;
const API = `${issuer}/api/v1`; // resource server verifying JWT access tokens locally
const INTROSPECTED = `${issuer}/api/introspected`; // resource server introspecting opaque ones
const CALLBACK = 'http://127.0.0.1:9/callback';
const PUBLIC_CLIENT = 'bench-public';
const RS_CLIENT = 'bench-rs';
const RS_SECRET = process.env.PEER_RS_SECRET || crypto.randomBytes(32).toString('base64url');
const SCHOOL = crypto.randomUUID();
const ACCOUNT = crypto.randomUUID();
const API_SCOPES = 'courses:read courses:write people:read';

function privateJwk(type, options, alg) {
  const { privateKey } = crypto.generateKeyPairSync(type, options);
  const jwk = privateKey.export({ format: 'jwk' });
  return { ...jwk, alg, use: 'sig', kid: crypto.randomBytes(8).toString('hex') };
}

const clockTolerance = 15;
const STORE = process.env.PEER_STORE || 'memory';

function adapterFactory() {
  if (STORE === 'memory') {
    const store = new LRU({ maxSize: 50_000_000 });
    return (model) => new MemoryAdapter(model, store, clockTolerance);
  }
  if (STORE === 'redis') {
    if (!process.env.PEER_REDIS_URL) throw new Error('PEER_REDIS_URL is required with PEER_STORE=redis');
    const client = new Redis(process.env.PEER_REDIS_URL);
    const prefix = process.env.PEER_REDIS_PREFIX || 'oidc:';
    return (model) => new RedisAdapter(model, client, { prefix, clockTolerance });
  }
  throw new Error(`PEER_STORE must be memory or redis, not ${STORE}`);
}

const provider = new Provider(issuer, {
  adapter: adapterFactory(),
  clockTolerance,
  clients: [
    {
      client_id: PUBLIC_CLIENT,
      client_name: 'Bench CLI',
      application_type: 'native',
      token_endpoint_auth_method: 'none',
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    {
      client_id: RS_CLIENT,
      client_name: 'Course School API',
      client_secret: RS_SECRET,
      token_endpoint_auth_method: 'client_secret_post',
      redirect_uris: [],
      grant_types: [],
      response_types: [],
    },
  ],
  jwks: {
    keys: [
      privateJwk('rsa', { modulusLength: 2048 }, 'RS256'),
      privateJwk('ec', { namedCurve: 'P-256' }, 'ES256'),
    ],
  },
  cookies: { keys: [crypto.randomBytes(32).toString('base64url')] },
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'preferred_username'],
  },
  scopes: ['openid', 'offline_access', 'email', 'profile'],
  async findAccount(ctx, sub) {
    if (sub !== ACCOUNT) return undefined;
    return {
      accountId: sub,
      async claims() {
        return {
          sub, email: 'owner@bench.test', email_verified: true, name: 'Bench Owner', preferred_username: 'owner',
        };
      },
    };
  },
  extraTokenClaims: (ctx, token) => (token.kind === 'AccessToken' ? { school_id: SCHOOL } : undefined),
  features: {
    devInteractions: { enabled: false },
    introspection: {
      enabled: true,
      // Resource servers (confidential clients) may introspect any token; a public
      // client only its own.
      allowedPolicy: async (ctx, client, token) => client.clientAuthMethod !== 'none'
        || token.clientId === client.clientId,
    },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => API,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (ctx, resource) => {
        if (resource === API) {
          return {
            scope: API_SCOPES, audience: API, accessTokenTTL: 600, accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        }
        if (resource === INTROSPECTED) {
          return { scope: API_SCOPES, audience: INTROSPECTED, accessTokenTTL: 600, accessTokenFormat: 'opaque' };
        }
        throw new Provider.errors.InvalidTarget();
      },
    },
  },
  pkce: { required: () => true },
  rotateRefreshToken: true,
  ttl: {
    AccessToken: 600,
    AuthorizationCode: 60,
    IdToken: 3600,
    RefreshToken: 30 * 24 * 3600,
    Grant: 30 * 24 * 3600,
    Session: 14 * 24 * 3600,
    Interaction: 3600,
  },
});

// -- bench only: single-use codes and refresh tokens minted through the provider's models --

const challenge = (verifier) => crypto.createHash('sha256').update(verifier).digest('base64url');
const VERIFIER = 'v'.repeat(64);

async function newGrant(resource) {
  const grant = new provider.Grant({ accountId: ACCOUNT, clientId: PUBLIC_CLIENT });
  grant.addOIDCScope('openid offline_access');
  grant.addResourceScope(resource, 'courses:read');
  return grant.save();
}

async function mintOne(kind, client) {
  const resource = kind === 'introspect-code' ? INTROSPECTED : API;
  const grantId = await newGrant(resource);
  const common = {
    accountId: ACCOUNT,
    authTime: Math.floor(Date.now() / 1000),
    client,
    expiresWithSession: false,
    grantId,
    resource,
    scope: 'openid offline_access courses:read',
  };
  if (kind === 'refresh') {
    const token = new provider.RefreshToken({ ...common, gty: 'authorization_code', rotations: 0 });
    return token.save();
  }
  const code = new provider.AuthorizationCode({
    ...common,
    codeChallenge: challenge(VERIFIER),
    codeChallengeMethod: 'S256',
    redirectUri: CALLBACK,
    expiresIn: 3600, // minted ahead of the rounds, so longer than a real code's minute
  });
  const value = await code.save();
  return new URLSearchParams({
    grant_type: 'authorization_code',
    code: value,
    redirect_uri: CALLBACK,
    code_verifier: VERIFIER,
    client_id: PUBLIC_CLIENT,
  }).toString();
}

// POST /__bench/mint?kind=code|refresh|introspect-code&count=N, Authorization: Bearer
// $BENCH_MINT_TOKEN. Answers one line per item: a token-endpoint form body for codes, a
// refresh token for refresh (the bench's lineages build their own bodies).
async function mint(req, res, url) {
  const expected = `Bearer ${process.env.BENCH_MINT_TOKEN}`;
  const given = req.headers.authorization || '';
  if (req.method !== 'POST' || given.length !== expected.length
      || !crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
    res.writeHead(404).end();
    return;
  }
  const kind = url.searchParams.get('kind');
  const count = Number(url.searchParams.get('count'));
  if (!['code', 'refresh', 'introspect-code'].includes(kind) || !(count > 0 && count <= 1_000_000)) {
    res.writeHead(400).end();
    return;
  }
  const client = await provider.Client.find(PUBLIC_CLIENT);
  const lines = [];
  for (let done = 0; done < count; done += 32) { // a few at a time: a durable store's round trips overlap
    const batch = Array.from({ length: Math.min(32, count - done) }, () => mintOne(kind, client));
    lines.push(...await Promise.all(batch));
  }
  res.writeHead(200, { 'content-type': 'text/plain' }).end(`${lines.join('\n')}\n`);
}

const handle = provider.callback();
const server = http.createServer((req, res) => {
  if (process.env.BENCH_MINT_TOKEN && req.url.startsWith('/__bench/')) {
    const url = new URL(req.url, issuer);
    if (url.pathname === '/__bench/mint') {
      mint(req, res, url).catch((err) => {
        console.error(err);
        res.writeHead(500).end();
      });
      return;
    }
  }
  handle(req, res);
});
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => {
  console.log(JSON.stringify({
    msg: 'listening', issuer, store: STORE, public_client: PUBLIC_CLIENT, rs_client: RS_CLIENT,
    api_resource: API, introspected_resource: INTROSPECTED,
  }));
});

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
