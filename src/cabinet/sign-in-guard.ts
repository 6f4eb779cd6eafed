// Shared with the operator console: src/lib/sign-in-guard.ts.
export * from '../lib/sign-in-guard.js';
