import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (p: string) => readFileSync(p, 'utf8');

describe('deployment files (no Docker engine here: checked by reading)', () => {
  it('.env.example lists every setting the service reads, each with a value line', () => {
    const example = read('.env.example');
    const keys = new Set<string>();
    for (const f of ['src/config.ts', 'src/entry/boot.ts']) {
      for (const m of read(f).matchAll(/\benv\.([A-Z][A-Z0-9_]+)/g)) keys.add(m[1]!);
    }
    expect(keys.size).toBeGreaterThan(15);
    for (const k of keys) expect(example, k).toMatch(new RegExp(`^${k}=`, 'm'));
  });

  it('Dockerfile: multi-stage on the Node LTS image; the build stage compiles, the runtime runs dist/ with plain node, non-root, health check', () => {
    const d = read('Dockerfile');
    expect(d.match(/^FROM node:22-bookworm-slim AS \w+/gm)).toHaveLength(2);
    const [build, runtime] = d.split(/^FROM .* AS runtime$/m) as [string, string];
    expect(build).toMatch(/npm ci/);
    expect(build).toMatch(/npm run generate/);
    expect(build).toMatch(/npm run build/);
    expect(build).toMatch(/npm prune --omit=dev/);
    // Everything the build script and tsc read is in the build context it copies.
    for (const f of ['tsconfig.json', 'tsconfig.build.json', 'scripts', 'src', 'prisma']) expect(build).toContain(f);
    // The runtime gets compiled code and the migrations (read from prisma/migrations), no sources.
    expect(runtime).toMatch(/COPY --from=build .*\/app\/dist \.\/dist/);
    expect(runtime).toMatch(/COPY --from=build .*\/app\/prisma \.\/prisma/);
    expect(runtime).not.toMatch(/\/app\/src|tsx/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\n?.*\/health/m);
    expect(runtime).toMatch(/^CMD \["node", "dist\/main.js"\]$/m);
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    // The image runs what `npm run start:prod` runs, with the same node flags (NODE_OPTIONS, so
    // every process of the image has them); `npm start` stays the newcomer's (tsx).
    const flags = '--max-semi-space-size=2';
    expect(runtime).toMatch(new RegExp(`^\\s+NODE_OPTIONS=${flags}$`, 'm'));
    // T-Bank's hosts chain to the Russian Trusted Root CA: the image pins it by digest and Node adds it.
    expect(runtime).toMatch(/^ADD --checksum=sha256:[0-9a-f]{64} /m);
    expect(runtime).toMatch(/^\s+NODE_EXTRA_CA_CERTS=\/usr\/local\/share\/ca-certificates\/russian_trusted_root_ca\.crt \\$/m);
    expect(scripts['start:prod']).toBe(`node ${flags} dist/main.js`);
    expect(scripts['worker:prod']).toBe(`node ${flags} dist/worker-main.js`);
    expect(scripts.start).toBe('tsx src/entry/main.ts');
    expect(scripts.build).toBe('node scripts/build.mjs');
    expect(read('scripts/build.mjs')).toContain('tsconfig.build.json');
  });

  it('docker-compose: postgres 16 with a volume and health check; api serving only; worker; both wait for a healthy db', () => {
    const c = read('docker-compose.yml');
    expect(c).toMatch(/image: postgres:16/);
    expect(c).toMatch(/pgdata:\/var\/lib\/postgresql\/data/);
    expect(c).toMatch(/pg_isready/);
    expect(c).toMatch(/RUN_WORKERS: "false"/);
    expect(c).toMatch(/command: \["node", "dist\/worker-main.js"\]/);
    expect(c).not.toMatch(/tsx|npm run admin /);
    expect(c.match(/condition: service_healthy/g)).toHaveLength(2);
  });
});
