import autocannon from 'autocannon';

export interface LoadResult {
  connections: number;
  duration_s: number;
  /** Successful (2xx) responses per second: the figure compared with the ceilings. */
  rps: number;
  /** Every response per second, errors included. */
  rps_all: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  requests: number;
  non_2xx: number;
  errors: number;
  timeouts: number;
  /** Peak RSS of the server while this run lasted (polled VmRSS), MB. */
  rss_mb?: number;
}

export interface LoadSpec {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Per-request body/path, e.g. a fresh order_id or the next bill id. */
  setup?: () => { path: string; body?: string; headers?: Record<string, string> };
}

/**
 * One autocannon run. Latency percentiles come from autocannon's HDR histogram (ms); rps counts
 * 2xx only, so a scenario that starts failing cannot look fast.
 */
export async function load(spec: LoadSpec, connections: number, durationS: number): Promise<LoadResult> {
  const u = new URL(spec.url);
  const request: autocannon.Request = {
    method: spec.method ?? 'GET',
    path: `${u.pathname}${u.search}`,
    headers: spec.headers,
    body: spec.body,
  };
  if (spec.setup) {
    const setup = spec.setup;
    request.setupRequest = (req) => {
      const r = setup();
      return { ...req, path: r.path, body: r.body ?? req.body, headers: r.headers ?? req.headers };
    };
  }
  const res = await autocannon({
    url: u.origin,
    connections,
    duration: durationS,
    pipelining: 1,
    timeout: 10,
    requests: [request],
  });
  const ok = res['2xx'];
  return {
    connections,
    duration_s: durationS,
    rps: Math.round(ok / durationS),
    rps_all: Math.round(res.requests.total / durationS),
    p50_ms: res.latency.p50,
    p99_ms: res.latency.p99,
    max_ms: res.latency.max,
    requests: res.requests.total,
    non_2xx: res.non2xx,
    errors: res.errors,
    timeouts: res.timeouts,
  };
}
