/**
 * Redis stores for Portcullis: the short-lived, write-heavy state (single-use challenges and
 * throttle counters) on Redis or Redis Cluster through node-redis, beside any durable storage:
 * {@link redisStores}, on a Redis that never evicts keys ({@link checkEvictionPolicy}).
 *
 * @packageDocumentation
 * @module @portcullis/redis
 */
export type { RedisClusterConnection, RedisConnection, RedisServerConnection } from "./connection.js";
export { type EvictionPolicyOptions, checkEvictionPolicy } from "./eviction-policy.js";
export { type RedisStores, type RedisStoresOptions, redisStores } from "./redis-stores.js";
export {
  type RedisClusterPubSub,
  type RedisRevocationChannel,
  type RedisRevocationChannelOptions,
  type RedisServerPubSub,
  redisRevocationChannel,
} from "./revocation-channel.js";
export { isRedisUnreachable } from "./unavailable.js";
