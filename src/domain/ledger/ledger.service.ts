import type { Db } from '../../db/client.js';
import { listAccounts, verifyLedger } from './verify.js';

/** The ledger's reads for the operator: the books check and the accounts with their balances. */
export class LedgerService {
  constructor(private readonly db: Db) {}

  verify(): ReturnType<typeof verifyLedger> {
    return verifyLedger(this.db.pool);
  }

  accounts(filter: { currency?: string; merchantId?: string } = {}): ReturnType<typeof listAccounts> {
    return listAccounts(this.db.pool, filter);
  }
}
