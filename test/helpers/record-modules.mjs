// node --import ./test/helpers/record-modules.mjs: appends the URL of every module the process
// resolves through the ESM loader to $RECORD_MODULES_FILE (a test instrument, not a loader of
// any source: it lets a test prove which files a process ran).
import { register } from 'node:module';

register('./record-modules-hooks.mjs', import.meta.url, { data: { file: process.env.RECORD_MODULES_FILE } });
