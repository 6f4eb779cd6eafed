import type { TestApp } from '../helpers/app.js';
import { ADMIN_TOKEN } from '../helpers/app.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/** One operator API call with the admin bearer token; returns status and parsed JSON. */
export async function admin(t: TestApp, method: Method, url: string, payload?: unknown) {
  const r = await t.app.inject({
    method, url: `/admin/v1${url}`,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });
  return { status: r.statusCode, body: r.json() as Record<string, any> };
}

let seq = 0;
/** A merchant created through the operator API. */
export async function adminMerchant(t: TestApp, extra: Record<string, unknown> = {}) {
  seq += 1;
  const r = await admin(t, 'POST', '/merchants', { name: `Op ${seq}`, email: `op${seq}-${process.pid}-${Math.random()}@example.test`, ...extra });
  if (r.status !== 201) throw new Error(`create merchant: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; api_token: string } & Record<string, any>;
}

/** GET /api/v1/merchant/balance with a merchant token. */
export async function merchantBalance(t: TestApp, token: string) {
  const r = await t.app.inject({ method: 'GET', url: '/api/v1/merchant/balance', headers: { authorization: `Bearer ${token}` } });
  return { status: r.statusCode, body: r.json() as Record<string, any> };
}
