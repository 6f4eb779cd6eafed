/**
 * The three kinds of operation a provider carries out for us. Conflicts, attention items,
 * provider notifications and the lifecycle all name an operation by one of these words, the
 * words `attention_items.object_type` holds.
 */
export type OperationType = 'payment' | 'payout' | 'refund';
