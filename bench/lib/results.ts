import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { CostFigures } from './report-processes.js';
import { join } from 'node:path';
import { ROOT } from './proc.js';

/**
 * bench/results/ keeps the latest result of each bench, one `<bench>.json` (and `.md` when the
 * bench writes a table), overwritten by the next run; the history worth keeping is the table in
 * docs/performance.md. Returns the paths written, relative to the project.
 */
export function writeResult(bench: string, json: unknown, md?: string): string[] {
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const written = [`bench/results/${bench}.json`];
  writeFileSync(join(ROOT, written[0]!), `${JSON.stringify(json, null, 2)}\n`);
  if (md !== undefined) {
    written.push(`bench/results/${bench}.md`);
    writeFileSync(join(ROOT, written[1]!), md.endsWith('\n') ? md : `${md}\n`);
  }
  return written;
}

/** The CPU per request of the latest `npm run bench:cost` of this checkout (its own tree), or null. */
export function latestCost(): CostFigures | null {
  const file = join(ROOT, 'bench', 'results', 'cost.json');
  if (!existsSync(file)) return null;
  const c = JSON.parse(readFileSync(file, 'utf8')) as { tree?: string; at: string; scenarios: CostFigures['scenarios'] };
  if (c.tree !== undefined && c.tree !== ROOT) return null;
  return { at: c.at, scenarios: c.scenarios };
}
