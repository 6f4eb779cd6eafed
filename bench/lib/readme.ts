import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './proc.js';

const START = '<!-- bench:latest:start -->';
const END = '<!-- bench:latest:end -->';

/** Puts the latest table between the bench markers of docs/performance.md, when it has them. */
export function updateReadme(md: string): void {
  const file = join(ROOT, 'docs', 'performance.md');
  if (!existsSync(file)) return;
  const text = readFileSync(file, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) return;
  writeFileSync(file, `${text.slice(0, a + START.length)}\n${md}\n${text.slice(b)}`);
}
