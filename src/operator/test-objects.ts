/** The console's list filter: everything (test rows marked), live only, or test only. */
export type ObjectMode = 'all' | 'live' | 'test';
export const modeOf = (v: string | undefined): ObjectMode => (v === 'live' || v === 'test' ? v : 'all');
