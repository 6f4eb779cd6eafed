import http from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { setupTestApp, type TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';
import { cardForm, payRequest } from '../factories/payment.js';
import { deliverUntil } from '../outbox/deliver-until.js';
import { startReceiver } from '../outbox/receiver.js';

/**
 * Replays of the public clients of docs/clients.md against the real server over real sockets:
 * each test file builds requests byte for byte as its client does (method, where parameters
 * go, content type, header spelling) and decodes answers with the client's own rules.
 */

export interface Wire { status: number; headers: http.IncomingHttpHeaders; text: string }

export interface Rig {
  t: TestApp;
  /** http://127.0.0.1:port, no trailing slash. */
  origin: string;
  m: MerchantFixture;
  receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** One raw HTTP request, exactly these headers (no defaults added but Host/Content-Length). */
  send(method: string, path: string, o?: { headers?: Record<string, string>; body?: string }): Promise<Wire>;
  /** Pays a bill on the hosted page with a card that succeeds and delivers its postback. */
  payAndDeliver(billId: string): Promise<{ postback: Record<string, string>; redirect: Record<string, string>; redirectUrl: string | null }>;
  close(): Promise<void>;
}

export async function startRig(merchant: Record<string, unknown> = {}): Promise<Rig> {
  const t = await setupTestApp();
  const receiver = await startReceiver();
  const m = await createMerchant(t, {
    merchant: { verified: true, grantRegularPayouts: true, grantRefunds: true, ...merchant },
    shop: { resultUrl: `${receiver.url}/result`, successUrl: `${receiver.url}/success`, failUrl: `${receiver.url}/fail` },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  const send: Rig['send'] = (method, path, o = {}) => new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    if (o.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(o.body));
    const req = http.request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    if (o.body !== undefined) req.write(o.body);
    req.end();
  });

  const log = pino({ level: 'silent' });
  const payAndDeliver: Rig['payAndDeliver'] = async (billId) => {
    const r = await payRequest(t, billId, cardForm());
    if (r.statusCode !== 200) throw new Error(`pay: ${r.statusCode} ${r.body}`);
    const before = receiver.received.length;
    // Until the postback arrived (bounded), not a fixed number of passes: a retry is due at once.
    await deliverUntil(t, () => receiver.received.slice(before).some((x) => x.path === '/result'), { log });
    const got = receiver.received.slice(before).find((x) => x.path === '/result');
    if (!got) throw new Error('no postback delivered');
    return { postback: got.fields, redirect: r.json().redirect.fields, redirectUrl: r.json().redirect.url };
  };

  return {
    t, origin, m, receiver, send, payAndDeliver,
    async close() {
      await receiver.close();
      await t.close();
    },
  };
}

export const md5upper = (s: string): string => createHash('md5').update(s, 'utf8').digest('hex').toUpperCase();

/** The signature check every client of the list does: upper(md5(OutSum:InvId:token)) on the strings received. */
export const robokassaLikeValid = (f: Record<string, string>, token: string): boolean =>
  f.SignatureValue !== undefined && md5upper(`${f.OutSum}:${f.InvId}:${token}`) === f.SignatureValue.toUpperCase();

/** Python's urllib/requests form encoding (spaces as '+'), PHP http_build_query is the same for these values. */
export const form = (fields: Record<string, string | number | undefined | null>): string =>
  new URLSearchParams(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => [k, String(v)])).toString();

// ---------------------------------------------------------------------------------------------
// Decoders with the rules of the clients' languages.
// ---------------------------------------------------------------------------------------------

export class DecodeError extends Error {}

/**
 * Go's encoding/json into a struct: `float64` takes a JSON number (a string is "cannot unmarshal
 * string into Go struct field"), `float64,string` / `bool,string` take a JSON string holding the
 * literal (a number is "invalid use of ,string struct tag"), `string` takes a string, `bool` a
 * boolean, `time` is go-cent-app's Time (time.Parse("2006-01-02 15:04:05") on the unquoted text).
 * null leaves the zero value, except for `time`, whose UnmarshalJSON parses "null" and fails.
 * Unknown fields are ignored.
 */
export type GoType = 'string' | 'float64' | 'float64,string' | 'bool' | 'bool,string' | 'time' | GoStruct | [GoStruct];
export interface GoStruct { [field: string]: GoType }

const GO_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

export function goDecode(value: unknown, type: GoType, path = '$'): void {
  if (Array.isArray(type)) {
    if (value === null) return;
    if (!Array.isArray(value)) throw new DecodeError(`${path}: cannot unmarshal into slice`);
    value.forEach((v, i) => goDecode(v, type[0], `${path}[${i}]`));
    return;
  }
  if (typeof type === 'object') {
    if (value === null) return;
    if (typeof value !== 'object' || Array.isArray(value)) throw new DecodeError(`${path}: cannot unmarshal into struct`);
    for (const [k, t] of Object.entries(type)) {
      if (k in (value as object)) goDecode((value as Record<string, unknown>)[k], t, `${path}.${k}`);
    }
    return;
  }
  if (type === 'time') {
    const s = JSON.stringify(value).replace(/^"|"$/g, '');
    if (!GO_TIME.test(s)) throw new DecodeError(`${path}: parsing time "${s}" as "2006-01-02 15:04:05"`);
    return;
  }
  if (value === null) return;
  switch (type) {
    case 'string': if (typeof value !== 'string') throw new DecodeError(`${path}: cannot unmarshal ${typeof value} into string`); return;
    case 'float64': if (typeof value !== 'number') throw new DecodeError(`${path}: cannot unmarshal ${typeof value} into float64`); return;
    case 'bool': if (typeof value !== 'boolean') throw new DecodeError(`${path}: cannot unmarshal ${typeof value} into bool`); return;
    case 'float64,string':
      if (typeof value !== 'string' || !/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value)) throw new DecodeError(`${path}: invalid use of ,string struct tag`);
      return;
    case 'bool,string':
      if (value !== 'true' && value !== 'false') throw new DecodeError(`${path}: invalid use of ,string struct tag`);
      return;
  }
}

/**
 * pydantic field types, lax mode (v2 unless `v1` says otherwise). v2: `float` and `Decimal`
 * take a number or a numeric string; `int` an integer, a whole float, or an integer string
 * (trailing ".000" stripped); `str` only a string; `bool` a boolean, 0/1 or "true"/"false"/
 * "1"/"0"; `datetime` ISO text (space or T). v1: `str` also coerces numbers; `float` as v2.
 * `strptime` is `datetime.strptime(v, "%Y-%m-%d %H:%M:%S")` done by the client before the model.
 * A field not Optional must be present and not null.
 */
export type PyType = 'str' | 'str1' | 'float' | 'int' | 'Decimal' | 'bool' | 'datetime' | 'strptime' | 'any' | PyModel | [PyModel] | PyField;
export interface PyField { field: true; type: PyType; optional: boolean; enum?: readonly string[] }
export interface PyModel { [name: string]: PyType }

/** `Optional[t] = None` */
export const opt = (type: PyType, values?: readonly string[]): PyField => ({ field: true, type, optional: true, enum: values });
/** A required field limited to `values` (an Enum). */
export const oneOf = (values: readonly string[], type: PyType = 'str'): PyField => ({ field: true, type, optional: false, enum: values });

const NUM = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

export function pyDecode(value: unknown, f: PyType, path = '$'): void {
  const field: PyField = typeof f === 'object' && !Array.isArray(f) && (f as PyField).field === true
    ? f as PyField : { field: true, type: f, optional: false };
  if (value === undefined || value === null) {
    if (field.optional) return;
    throw new DecodeError(`${path}: ${value === undefined ? 'field required' : 'none is not an allowed value'}`);
  }
  const t = field.type;
  if (Array.isArray(t)) {
    if (!Array.isArray(value)) throw new DecodeError(`${path}: Input should be a valid list`);
    value.forEach((v, i) => pyDecode(v, t[0], `${path}[${i}]`));
    return;
  }
  if (typeof t === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) throw new DecodeError(`${path}: Input should be a valid dictionary`);
    for (const [k, sub] of Object.entries(t)) pyDecode((value as Record<string, unknown>)[k], sub, `${path}.${k}`);
    return;
  }
  if (field.enum && !field.enum.includes(String(value))) throw new DecodeError(`${path}: not a valid enumeration member: ${String(value)}`);
  switch (t) {
    case 'any': return;
    case 'str': if (typeof value !== 'string') throw new DecodeError(`${path}: Input should be a valid string`); return;
    case 'str1': if (typeof value !== 'string' && typeof value !== 'number') throw new DecodeError(`${path}: str type expected`); return;
    case 'float':
    case 'Decimal':
      if (typeof value === 'number') return;
      if (typeof value === 'string' && NUM.test(value)) return;
      throw new DecodeError(`${path}: Input should be a valid number`);
    case 'int':
      if (typeof value === 'number' && Number.isInteger(value)) return;
      if (typeof value === 'string' && /^\s*[+-]?\d+(\.0*)?\s*$/.test(value)) return;
      throw new DecodeError(`${path}: Input should be a valid integer`);
    case 'bool':
      if (typeof value === 'boolean' || value === 0 || value === 1) return;
      if (typeof value === 'string' && ['true', 'false', '1', '0', 'yes', 'no', 'on', 'off', 't', 'f', 'y', 'n'].includes(value.toLowerCase())) return;
      throw new DecodeError(`${path}: Input should be a valid boolean`);
    case 'datetime':
      if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}([T t_]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(value)) return;
      throw new DecodeError(`${path}: Input should be a valid datetime`);
    case 'strptime':
      if (typeof value === 'string' && GO_TIME.test(value)) return;
      throw new DecodeError(`${path}: time data ${JSON.stringify(value)} does not match format '%Y-%m-%d %H:%M:%S'`);
  }
}
