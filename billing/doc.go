// Package billing owns money: the shared credit pool of each account, the
// append-only ledger, purchases, signed download links, the download log,
// purchase listings with their summaries and the balance.
package billing
