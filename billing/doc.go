// Package billing owns money: the shared balance of each account, the
// append-only ledger, purchases, signed download links, the download log,
// purchase listings with their summaries and the balance.
//
// Every purchase, whatever its door, takes one path to the commit:
//
//	api/purchase_create.go (REST v1) ─┐
//	api/mcp_tools.go (MCP)           ─┼─> Service.Purchase / Service.LegacyPurchase
//	api/legacy.go (v0)               ─┘        │ a purchaseJob: buyer, video ids, expected total, dry run
//	                                           v
//	batcher.go: jobs of one account and mode (live or test) that arrive together
//	    form a batch (distinct buyers)
//	                                           │ one statement, binary arrays in, one row per video out
//	                                           v
//	migrations/functions/purchase_batch.sql: price, check, insert purchases;
//	    then lock the account row: running sum, spend limits, ledger rows,
//	    charge the pool once (purchase_events.sql: the outbox rows); commit,
//	    sent behind them once the batch's hold is in place (batch_pipeline.go)
//	                                           │ a verdict per job
//	                                           v
//	purchase_verdict.go: bought/owned/quoted -> PurchaseResult (links signed);
//	    unknown -> 404, price_changed -> 409, insufficient_credits -> 402
//
// The rules of a purchase live in that SQL function alone; Go only carries
// the arrays in and turns verdicts into answers. Test mode is a parameter
// of it: a test key's batch charges the account's test balance row
// (test_balance.go) instead of the live pool, and every reader of live
// money leaves livemode = false rows out (visibility.go, ledger.go,
// audit.go, account.go).
package billing
