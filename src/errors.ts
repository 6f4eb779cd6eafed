/**
 * Typed errors. A DomainError carries the spec's key (`api:error.<code>`); the status comes from
 * the route's `config.errorStatus` (each endpoint lists its own statuses in the spec), then from
 * the error itself, then 400.
 */
export class DomainError extends Error {
  constructor(public readonly code: string, public readonly status?: number) {
    super(`api:error.${code}`);
  }
}

/** 422 with Laravel-style `errors: { field: [messages] }`. */
export class ValidationError extends Error {
  constructor(public readonly errors: Record<string, string[]>) {
    super('The given data was invalid.');
  }
  static field(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

/** 401 Unauthenticated. */
export class UnauthenticatedError extends Error {
  constructor() { super('Unauthenticated.'); }
}

/** 403 for a missing grant. */
export class UnauthorizedActionError extends Error {
  constructor() { super('This action is unauthorized.'); }
}

/** 404 for the operator API and pages. */
export class NotFoundError extends Error {
  constructor(what = 'Not Found.') { super(what); }
}

/** 409, e.g. an Idempotency-Key request still running. */
export class ConflictError extends Error {}

export type ErrorStatusMap = Partial<Record<string, number>>;
