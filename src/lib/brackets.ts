/**
 * PHP-style bracket fields (`items[0][name]=Tea`, `request_fields[]=email`,
 * `request_fields[email]=1`) as the public clients send them in query strings, urlencoded and
 * multipart bodies: the body parsers give flat keys, this nests them. `a[]` appends (a repeated
 * key's values too); any other segment is an object key, so `items[0][name]` gives
 * `{ items: { "0": { name } } }` and readers take numbered objects and arrays alike (`listOf`).
 */

const MAX_DEPTH = 4;
const MAX_LIST = 1000;
// Never let a client name a property of Object.prototype.
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
const KEY = /^([^[\]]+)((?:\[[^[\]]*\])+)$/;

type Tree = Record<string, unknown>;

function segmentsOf(key: string): string[] | null {
  const m = KEY.exec(key);
  if (!m) return null;
  const segs = [m[1]!, ...[...m[2]!.matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1]!)];
  if (segs.length > MAX_DEPTH + 1 || segs.some((s) => FORBIDDEN.has(s))) return null;
  // `[]` only at the end (`a[][b]` is not something clients send).
  if (segs.slice(0, -1).some((s, i) => i > 0 && s === '')) return null;
  return segs;
}

function put(root: Tree, segs: string[], value: unknown): void {
  let node: Tree = root;
  for (let i = 0; i < segs.length - 1; i += 1) {
    const s = segs[i]!;
    const next = segs[i + 1]!;
    let child = node[s];
    if (next === '' && i + 1 === segs.length - 1) {
      // a[] = v (or a repeated key's array of values): append.
      if (!Array.isArray(child)) child = node[s] = child === undefined ? [] : [child];
      const list = child as unknown[];
      for (const v of Array.isArray(value) ? value : [value]) if (list.length < MAX_LIST) list.push(v);
      return;
    }
    if (child === null || typeof child !== 'object' || Array.isArray(child)) child = node[s] = {};
    node = child as Tree;
  }
  node[segs[segs.length - 1]!] = value;
}

/** The input with bracket keys nested; keys without brackets are kept as they are. */
export function expandBrackets(input: Record<string, unknown>): Record<string, unknown> {
  let out: Tree | null = null;
  for (const [k, v] of Object.entries(input)) {
    if (!k.includes('[')) continue;
    out ??= { ...input };
    delete out[k];
    const segs = segmentsOf(k);
    if (!segs) continue;
    // A plain value under the same name (e.g. `items=` sent with `items[0][name]`) is replaced.
    if (out[segs[0]!] !== undefined && (typeof out[segs[0]!] !== 'object' || out[segs[0]!] === null)) delete out[segs[0]!];
    put(out, segs, v);
  }
  return out ?? input;
}

/**
 * A list sent as an array, or as an object with numeric keys (`items[0]`, `items[1]`) in the
 * order of those numbers; null for anything else.
 */
export function listOf(v: unknown): unknown[] | null {
  if (Array.isArray(v)) return v;
  if (v === null || typeof v !== 'object') return null;
  const entries = Object.entries(v as Tree);
  if (!entries.every(([k]) => /^\d{1,4}$/.test(k))) return null;
  return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, x]) => x);
}
