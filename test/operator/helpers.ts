import { generate } from 'otplib';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.js';
import { CabinetClient } from '../cabinet/helpers.js';
import type { Role } from '../../src/admin/auth.js';

export const OP_PASSWORD = 'operator password 0123';

/** A browser over app.inject for /operator (the cabinet test client's cookie jar). */
export class ConsoleClient extends CabinetClient {
  /** The hidden inputs of the first form on a page (CSRF and the single-use form token). */
  static formOf(html: string): Record<string, string> {
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html);
    const form = /name="_form" value="([^"]+)"/.exec(html);
    if (!csrf) throw new Error('no form on the page');
    return { _csrf: csrf[1]!, ...(form ? { _form: form[1]! } : {}) };
  }

  /** Opens `from`, then posts `form` with that page's tokens to `url`. */
  async act(from: string, url: string, form: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const page = await this.get(from);
    if (page.statusCode !== 200) throw new Error(`${from}: ${page.statusCode}`);
    return this.post(url, { ...ConsoleClient.formOf(page.body), ...form });
  }
}

/** A TOTP code for `secret` at `offsetSteps` steps from now (a step is accepted once). */
export const totpCode = (secret: string, offsetSteps = 0): Promise<string> =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });

export interface OperatorFixture { id: string; email: string; role: Role; secret: string; client: ConsoleClient }

let n = 0;
/** An operator with a password, through the service the CLI and the API use. */
export async function createOperator(t: TestApp, role: Role, email = `op${++n}-${Date.now()}@ops.test`): Promise<{ id: string; email: string }> {
  const o = await t.app.services.operators.create({ email, role, password: OP_PASSWORD });
  return { id: o.id, email: o.email };
}

/** Password, then the TOTP enrolment of a first sign-in; returns the client signed in and the secret. */
export async function enrolledOperator(t: TestApp, role: Role, ip?: string): Promise<OperatorFixture> {
  const op = await createOperator(t, role);
  const client = new ConsoleClient(t, ip);
  const login = await client.get('/operator/login');
  const r = await client.post('/operator/login', { ...ConsoleClient.formOf(login.body), email: op.email, password: OP_PASSWORD });
  if (r.statusCode !== 303) throw new Error(`password step: ${r.statusCode}`);
  const enrol = await client.get('/operator/2fa');
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.body)?.[1];
  if (!secret) throw new Error('no TOTP secret on the enrolment page');
  const done = await client.post('/operator/2fa/enrol', { ...ConsoleClient.formOf(enrol.body), code: await totpCode(secret) });
  if (done.statusCode !== 200) throw new Error(`enrolment: ${done.statusCode}`);
  return { ...op, role, secret, client };
}
