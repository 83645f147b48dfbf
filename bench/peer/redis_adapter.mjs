// A Redis adapter for oidc-provider, written the way a deployment of it writes one (the
// adapter interface of oidc-provider's lib/adapters/memory_adapter.js, on ioredis): the
// durable peer of `make bench`. Every model is a key of its own holding its payload as
// JSON with the model's TTL (plus the provider's clock tolerance, as the shipped adapter
// keeps it). Models that can be consumed (codes, refresh tokens) are a hash with the JSON
// in `payload`, so that `consume` sets its `consumed` field in place instead of rewriting
// the payload. Tokens and codes are listed under their grant id, for revokeByGrantId
// (logout, reuse of a rotated refresh token, a code used twice); sessions are indexed by
// uid and device codes by user code. Each upsert is one MULTI/EXEC round trip; the grant
// list keeps the TTL of its longest-lived member (EXPIRE NX then GT, Redis 7).
//
// Keys: `${prefix}${model}:${id}`, `${prefix}grant:${grantId}`, `${prefix}uid:${uid}`,
// `${prefix}userCode:${userCode}`; the prefix keeps one bench run's keys apart (the bench
// deletes them by prefix afterwards, never the whole database).

import epochTime from 'oidc-provider/lib/helpers/epoch_time.js';

export const GRANTABLE = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

export const CONSUMABLE = new Set([
  'AuthorizationCode',
  'RefreshToken',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PreAuthorizedCode',
]);

export default class RedisAdapter {
  constructor(model, client, { prefix = 'oidc:', clockTolerance = 0 } = {}) {
    this.model = model;
    this.client = client;
    this.prefix = prefix;
    this.clockTolerance = clockTolerance;
    this.consumable = CONSUMABLE.has(model);
    this.grantable = GRANTABLE.has(model);
  }

  key(id) {
    return `${this.prefix}${this.model}:${id}`;
  }

  grantKey(grantId) {
    return `${this.prefix}grant:${grantId}`;
  }

  uidKey(uid) {
    return `${this.prefix}uid:${uid}`;
  }

  userCodeKey(userCode) {
    return `${this.prefix}userCode:${userCode}`;
  }

  async upsert(id, payload, expiresIn) {
    const key = this.key(id);
    const ttl = typeof expiresIn === 'number' ? expiresIn + this.clockTolerance : undefined;
    const multi = this.client.multi();
    const json = JSON.stringify(payload);
    if (this.consumable) {
      // a replacement starts unconsumed
      multi.del(key);
      multi.hset(key, 'payload', json);
      if (ttl) multi.expire(key, ttl);
    } else if (ttl) {
      multi.set(key, json, 'EX', ttl);
    } else {
      multi.set(key, json);
    }
    if (this.grantable && payload.grantId) {
      const grantKey = this.grantKey(payload.grantId);
      multi.rpush(grantKey, key);
      if (ttl) {
        multi.expire(grantKey, ttl, 'NX');
        multi.expire(grantKey, ttl, 'GT');
      }
    }
    if (this.model === 'Session' && payload.uid) {
      if (ttl) multi.set(this.uidKey(payload.uid), id, 'EX', ttl);
      else multi.set(this.uidKey(payload.uid), id);
    }
    if (payload.userCode) {
      if (ttl) multi.set(this.userCodeKey(payload.userCode), id, 'EX', ttl);
      else multi.set(this.userCodeKey(payload.userCode), id);
    }
    await exec(multi);
  }

  async find(id) {
    if (!id) return undefined;
    const key = this.key(id);
    if (!this.consumable) {
      const json = await this.client.get(key);
      return json ? JSON.parse(json) : undefined;
    }
    const stored = await this.client.hgetall(key);
    if (!stored.payload) return undefined;
    const payload = JSON.parse(stored.payload);
    if (stored.consumed) payload.consumed = Number(stored.consumed);
    return payload;
  }

  async findByUid(uid) {
    return this.find(await this.client.get(this.uidKey(uid)));
  }

  async findByUserCode(userCode) {
    return this.find(await this.client.get(this.userCodeKey(userCode)));
  }

  async consume(id) {
    // Called right after find(), as the shipped adapter's is; an entry that expired in
    // between becomes a hash without a payload (and without a TTL), which find() reads as
    // absent.
    await this.client.hset(this.key(id), 'consumed', epochTime());
  }

  async destroy(id) {
    await this.client.del(this.key(id));
  }

  async revokeByGrantId(grantId) {
    const grantKey = this.grantKey(grantId);
    const members = await this.client.lrange(grantKey, 0, -1);
    const multi = this.client.multi();
    if (members.length) multi.del(...members);
    multi.del(grantKey);
    await exec(multi);
  }
}

// MULTI/EXEC answers each command's error in its results instead of rejecting.
async function exec(multi) {
  const results = await multi.exec();
  for (const [err] of results ?? []) {
    if (err) throw err;
  }
}
