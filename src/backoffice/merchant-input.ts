import { defineInput, v } from '../lib/input.js';
import { ValidationError } from '../errors.js';

/** POST /merchants input (the console's create form is parsed with it too). */
export const CreateInput = defineInput({
  name: v.string({ required: true, max: 255 }),
  email: v.string({ required: true, max: 255, pattern: /^[^\s@]+@[^\s@]+\.[^\s@]+$/ }),
  // The operator's choice (cabinet logins are rate-limited and locked out after failures).
  password: v.string({ max: 255 }),
});

/** `member_id` of a 2FA reset: absent or null is the owner; a non-empty string a team member; anything else a 422. */
export function memberIdOf(body: Record<string, unknown>): string | null {
  const m = body.member_id;
  if (m === undefined || m === null) return null;
  if (typeof m !== 'string' || m.trim() === '') throw new ValidationError({ member_id: ['The member id must be a team member\'s id, or absent for the owner.'] });
  return m.trim();
}

/** The reason of a cabinet 2FA reset: required, what the operator checked (kept in the audit trail). */
export function resetReasonOf(body: Record<string, unknown>): string {
  const r = typeof body.reason === 'string' ? body.reason.trim() : '';
  if (!r) throw new ValidationError({ reason: ['Say why the two-factor sign-in is reset (how the person was identified).'] });
  if (r.length > 500) throw new ValidationError({ reason: ['The reason may not be greater than 500 characters.'] });
  return r;
}
