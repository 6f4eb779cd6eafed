import fp from 'fastify-plugin';
import type { FastifyError, FastifyInstance } from 'fastify';
import { TooManyRequestsError } from './rate-limit.js';
import { isMalformedBody } from './bad-input.js';
import { classifyDatabaseError, isDatabaseUnavailable, reportInvariantViolation } from '../db/database-error.js';
import {
  ConflictError, DomainError, NotFoundError, UnauthenticatedError, UnauthorizedActionError, ValidationError, type ErrorStatusMap,
} from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Statuses of this endpoint where the spec lists other than the code's usual one (src/errors.ts). */
    errorStatus?: ErrorStatusMap;
  }
}

/**
 * One error handler for the whole service: JSON with `success: false` and `message`, never a
 * stack trace or HTML. Unknown errors are logged and answered 500 api:error.general_error.
 * A database refusal answers by whose fault it is (src/db/database-error.ts): a value from the
 * request 422; a broken invariant (a money CHECK, a trigger guard) 500 with an alert; a database
 * that cannot be reached (down, failing over) 503 general_error with Retry-After, which clients retry.
 */

/** Seconds a client waits before it retries while the database cannot be reached (a failover takes a few). */
export const UNAVAILABLE_RETRY_AFTER_S = 2;
export const errorHandler = fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((err: FastifyError | Error, req, reply) => {
      if (err instanceof DomainError) {
        const status = req.routeOptions.config?.errorStatus?.[err.code] ?? err.status;
        return reply.status(status).send({ success: false, message: err.message });
      }
      if (err instanceof ValidationError) {
        return reply.status(422).send({ success: false, message: err.message, errors: err.errors });
      }
      if (err instanceof UnauthenticatedError) return reply.status(401).send({ success: false, message: err.message });
      if (err instanceof UnauthorizedActionError) return reply.status(403).send({ success: false, message: err.message });
      if (err instanceof NotFoundError) return reply.status(404).send({ success: false, message: err.message });
      if (err instanceof TooManyRequestsError) return reply.status(429).send({ success: false, message: err.message });
      if (err instanceof ConflictError) return reply.status(409).send({ success: false, message: err.message });
      if (isMalformedBody(err, req)) return reply.status(422).send({ success: false, message: 'The given data was invalid.', errors: {} });
      const dbFault = classifyDatabaseError(err);
      if (dbFault?.fault === 'client') {
        req.log.warn({ pgCode: dbFault.sqlstate, constraint: dbFault.constraint, msg: err.message }, 'database refused input');
        return reply.status(422).send({ success: false, message: 'The given data was invalid.', errors: {} });
      }
      if (dbFault?.fault === 'invariant') {
        reportInvariantViolation(req.log, dbFault, err, `${req.method} ${req.routeOptions.url ?? 'unmatched'}`);
        return reply.status(500).send({ success: false, message: 'api:error.general_error' });
      }
      const statusCode = (err as FastifyError).statusCode;
      const status = typeof statusCode === 'number' ? statusCode : 500;
      if (status >= 400 && status < 500) {
        // Fastify's own client errors: bad JSON, wrong content type, body too large...
        const message = status === 415 ? 'Unsupported Media Type.' : status === 413 ? 'Payload Too Large.' : 'The given data was invalid.';
        const code = status === 400 || status === 415 ? 422 : status;
        return reply.status(code).send({ success: false, message, ...(code === 422 ? { errors: {} } : {}) });
      }
      if (isDatabaseUnavailable(err)) {
        req.log.warn({ err: { message: err.message, code: (err as { code?: unknown }).code } }, 'database unavailable');
        return reply.status(503).header('retry-after', String(UNAVAILABLE_RETRY_AFTER_S)).send({ success: false, message: 'api:error.general_error' });
      }
      req.log.error({ err }, 'unhandled error');
      return reply.status(500).send({ success: false, message: 'api:error.general_error' });
    });
    app.setNotFoundHandler((_req, reply) => reply.status(404).send({ success: false, message: 'Not Found.' }));
  },
  { name: 'error-handler' },
);
