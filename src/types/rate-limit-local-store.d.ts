// @fastify/rate-limit's own in-process store (a CommonJS file its types do not declare).
declare module '@fastify/rate-limit/store/LocalStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit';
  const LocalStore: new (continueExceeding?: boolean, exponentialBackoff?: boolean, cache?: number) => FastifyRateLimitStore;
  export default LocalStore;
}
