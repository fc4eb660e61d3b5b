/**
 * Redis stores for Portcullis: the short-lived, write-heavy state (challenges and throttle
 * counters) on Redis or Redis Cluster through node-redis, beside any durable storage.
 *
 * @packageDocumentation
 * @module @portcullis/redis
 */
export {};
