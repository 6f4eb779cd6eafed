import type { SettingsSchema } from '../../plugin.js';

/** Settings of a sandbox-kind connector; `refuse` (tests, staging drills) refuses every creation. */
export interface SandboxSettings { refuse?: boolean }

export const SANDBOX_SETTINGS: SettingsSchema = {
  refuse: { type: 'boolean', description: 'true: refuse every creation, as a provider that is down would (tests, staging drills)' },
};
