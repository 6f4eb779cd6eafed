import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/app.js';
import { generate } from 'otplib';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

export const PASSWORD = 'correct horse battery staple';

/** A tiny cookie jar over app.inject, as a browser would keep cookies for /cabinet. */
export class CabinetClient {
  cookies = new Map<string, string>();
  /** `ip`: the client address the app sees (several clients, several addresses). */
  constructor(private readonly t: TestApp, readonly ip?: string) {}

  private header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: LightMyRequestResponse): void {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      if (c.value === '' || (c.expires && c.expires.getTime() < Date.now())) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const res = await this.t.app.inject({ method: 'GET', url, headers: { cookie: this.header(), ...headers }, ...(this.ip ? { remoteAddress: this.ip } : {}) });
    this.keep(res);
    return res;
  }

  async post(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    const res = await this.t.app.inject({
      method: 'POST', url, payload: new URLSearchParams(form).toString(), ...(this.ip ? { remoteAddress: this.ip } : {}),
      headers: { cookie: this.header(), 'content-type': 'application/x-www-form-urlencoded', ...headers },
    });
    this.keep(res);
    return res;
  }

  /** The CSRF token of the form on a page. */
  static csrfOf(html: string): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error('no CSRF token on the page');
    return m[1]!;
  }

  async csrf(url = '/cabinet'): Promise<string> {
    const res = await this.get(url);
    return CabinetClient.csrfOf(res.body);
  }

  async login(email: string, password: string): Promise<LightMyRequestResponse> {
    const page = await this.get('/cabinet/login');
    return this.post('/cabinet/login', { _csrf: CabinetClient.csrfOf(page.body), email, password });
  }

  /** Posts a cabinet form with the session's CSRF token taken from `from`. */
  async submit(from: string, url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.post(url, { _csrf: await this.csrf(from), ...form });
  }
}

export interface CabinetMerchant extends MerchantFixture { email: string }

/** A merchant with a cabinet password. */
export async function cabinetMerchant(t: TestApp, opts: Parameters<typeof createMerchant>[1] = {}): Promise<CabinetMerchant> {
  const m = await createMerchant(t, opts);
  await t.app.services.merchants.setPassword(m.merchantId, PASSWORD);
  const row = await t.db.prisma.merchant.findUniqueOrThrow({ where: { id: m.merchantId } });
  return { ...m, email: row.email };
}

export async function signedIn(t: TestApp, m: CabinetMerchant): Promise<CabinetClient> {
  const c = new CabinetClient(t);
  const r = await c.login(m.email, PASSWORD);
  if (r.statusCode !== 303) throw new Error(`sign-in failed: ${r.statusCode}`);
  return c;
}

/** Turns TOTP on from the security page with a code of `step` (each step is accepted once); the secret and the recovery codes shown. */
export async function enableTotp(c: CabinetClient, step = -1): Promise<{ secret: string; codes: string[] }> {
  const page = await c.get('/cabinet/security');
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(page.body)?.[1];
  if (!secret) throw new Error('no TOTP secret on the security page');
  const code = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + step * 30 });
  const r = await c.post('/cabinet/security/totp/enable', { _csrf: CabinetClient.csrfOf(page.body), code });
  if (r.statusCode !== 200) throw new Error(`enable: ${r.statusCode}`);
  const codes = [...r.body.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
  return { secret, codes };
}

export const MEMBER_PASSWORD = 'member password 0123';
let memberSeq = 0;

/** A team member of `m` with `role` (invited and accepted through the service) and a client signed in as them. */
export async function teamMember(t: TestApp, m: CabinetMerchant, role: 'owner' | 'developer' | 'accountant' | 'support'): Promise<{ id: string; email: string; client: CabinetClient }> {
  const { member: u, token } = await t.app.services.team.invite(m.merchantId, { email: `member${++memberSeq}-${process.pid}-${Date.now()}@team.test`, role });
  await t.app.services.team.accept(token, MEMBER_PASSWORD);
  const client = new CabinetClient(t);
  const r = await client.login(u.email, MEMBER_PASSWORD);
  if (r.statusCode !== 303) throw new Error(`member sign-in: ${r.statusCode}`);
  return { id: u.id, email: u.email, client };
}
