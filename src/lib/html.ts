import { Eta } from 'eta';

/**
 * The one HTML escaper: every value that reaches a page goes through it, whether a template
 * prints it (`<%= %>` in every engine made by `templates` below) or code builds a fragment (an
 * SVG chart, a form's hidden inputs). The five characters that can end a text node or a quoted
 * attribute value, as numeric references; every attribute the pages write is quoted.
 */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/**
 * The Eta engine of a face's views folder: printed values escaped by `escapeHtml` (`<%~ %>` for
 * HTML the code built and escaped already), templates compiled once.
 */
export function templates(views: string): Eta {
  return new Eta({ views, autoEscape: true, escapeFunction: escapeHtml, cache: true });
}
