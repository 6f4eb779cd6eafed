import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (p: string) => readFileSync(p, 'utf8');

describe('deployment files (no Docker engine here: checked by reading)', () => {
  it('.env.example lists every setting the service reads, each with a value line', () => {
    const example = read('.env.example');
    const keys = new Set<string>();
    for (const f of ['src/config.ts', 'src/boot.ts']) {
      for (const m of read(f).matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) keys.add(m[1]!);
    }
    expect(keys.size).toBeGreaterThan(15);
    for (const k of keys) expect(example, k).toMatch(new RegExp(`^${k}=`, 'm'));
  });

  it('Dockerfile: multi-stage on the Node LTS image, generated client, non-root, health check, npm start equivalent', () => {
    const d = read('Dockerfile');
    expect(d.match(/^FROM node:22-bookworm-slim AS \w+/gm)).toHaveLength(2);
    expect(d).toMatch(/npm ci/);
    expect(d).toMatch(/npm run generate/);
    expect(d).toMatch(/^USER node$/m);
    expect(d).toMatch(/^HEALTHCHECK .*\n?.*\/health/m);
    expect(d).toMatch(/^CMD \["node", "--import", "tsx", "src\/main.ts"\]$/m);
    const start = JSON.parse(read('package.json')).scripts.start as string;
    expect(start).toBe('tsx src/main.ts');
  });

  it('docker-compose: postgres 16 with a volume and health check; api serving only; worker; both wait for a healthy db', () => {
    const c = read('docker-compose.yml');
    expect(c).toMatch(/image: postgres:16/);
    expect(c).toMatch(/pgdata:\/var\/lib\/postgresql\/data/);
    expect(c).toMatch(/pg_isready/);
    expect(c).toMatch(/RUN_WORKERS: "false"/);
    expect(c).toMatch(/command: \["npm", "run", "worker"\]/);
    expect(c.match(/condition: service_healthy/g)).toHaveLength(2);
  });
});
