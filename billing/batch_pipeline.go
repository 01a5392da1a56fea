package billing

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// runHeld runs pb's statements in one transaction on c and commits it once
// r's hold is in place, reading each statement's rows with read (i is the
// statement's place in pb).
//
// BEGIN and the statements go out at once, and while Postgres runs them
// the batch waits for its hold. A hold in place within holdPatience sends
// the COMMIT behind them, in the same round trip: Postgres starts the
// commit as soon as the statements end, and the batch hears of both in
// one reply, instead of reading the statements' answer and then waiting
// for a second round trip while the account row stays locked. A hold not
// in place by then is waited for again once the statements are done (they
// may still be waiting for the account row), as long again; still missing,
// the transaction rolls back and runHeld returns errHoldLate. A batch
// whose rows read fails after its COMMIT went out returns errUnread when
// the commit succeeded.
//
// The statements go through pgconn's pipeline, which pgx.Batch cannot hold
// open while the hold travels; they are traced as the batch they are
// (pgx.BatchTracer), and their statement descriptions are kept with the
// connection (statementFor).
func runHeld(ctx context.Context, c *pgx.Conn, pb *pgx.Batch, r *batchRun, read func(i int, rows pgx.Rows) error) (err error) {
	qs := pb.QueuedQueries
	sds := make([]*pgconn.StatementDescription, len(qs))
	eqbs := make([]pgx.ExtendedQueryBuilder, len(qs))
	for i, q := range qs {
		if sds[i], err = statementFor(ctx, c, q.SQL); err != nil {
			return err
		}
		if err := eqbs[i].Build(c.TypeMap(), sds[i], q.Arguments); err != nil {
			return err
		}
	}
	tracer, _ := c.Config().Tracer.(pgx.BatchTracer)
	if tracer != nil {
		ctx = tracer.TraceBatchStart(ctx, c, pgx.TraceBatchStartData{Batch: pb})
		defer func() { tracer.TraceBatchEnd(ctx, c, pgx.TraceBatchEndData{Err: err}) }()
	}

	p := c.PgConn().StartPipeline(ctx)
	p.SendQueryParams(beginSQL, nil, nil, nil, nil)
	for i, sd := range sds {
		p.SendQueryStatement(sd, eqbs[i].ParamValues, eqbs[i].ParamFormats, eqbs[i].ResultFormats)
	}
	if err := p.Flush(); err != nil {
		_ = p.Close()
		return err
	}
	held := r.waitHold(ctx, holdPatience)
	if held {
		p.SendQueryParams(commitSQL, nil, nil, nil, nil)
	}
	if err := p.Sync(); err != nil {
		_ = p.Close()
		return err
	}

	// After an error of Postgres it skips everything up to the sync: the
	// first such error is the batch's, and nothing after it is read.
	// Closing the pipeline then closes the connection, which ends the
	// transaction. An error of the reader (rows it could not decode) stops
	// nothing on the server: the rest is read, the COMMIT's outcome with it.
	var first, unread error
	result := func(consume func(*pgconn.ResultReader) error) pgconn.CommandTag {
		if first != nil {
			return pgconn.CommandTag{}
		}
		res, err := p.GetResults()
		if err != nil {
			first = err
			return pgconn.CommandTag{}
		}
		rr, ok := res.(*pgconn.ResultReader)
		if !ok {
			first = fmt.Errorf("billing: unexpected pipeline result %T", res)
			return pgconn.CommandTag{}
		}
		if consume != nil {
			if err := consume(rr); err != nil && unread == nil {
				unread = err
			}
		}
		// The server's error, also when consume met it first.
		tag, err := rr.Close()
		if err != nil {
			first = err
		}
		return tag
	}
	result(nil) // BEGIN
	for i, q := range qs {
		tag := result(func(rr *pgconn.ResultReader) error { return read(i, pgx.RowsFromResultReader(c.TypeMap(), rr)) })
		if tracer != nil {
			tracer.TraceBatchQuery(ctx, c, pgx.TraceBatchQueryData{SQL: q.SQL, Args: q.Arguments, CommandTag: tag, Err: first})
		}
	}
	if held {
		result(nil) // COMMIT
	}
	if err := p.Close(); first == nil {
		first = err
	}
	switch {
	case first != nil:
		return first
	case unread != nil && held:
		// Committed, but the answer could not be read.
		return fmt.Errorf("%w: %w", errUnread, unread)
	case unread != nil:
		// Not committed: the open transaction ends with the connection.
		return unread
	case held:
		return nil
	}
	if !r.waitHold(ctx, holdPatience) {
		_, _ = c.Exec(ctx, rollbackSQL)
		return errHoldLate
	}
	_, err = c.Exec(ctx, commitSQL)
	return err
}

// errUnread is a batch that committed but whose answer could not be read:
// it runs again, and finds what it bought by its purchases' ids.
var errUnread = errors.New("billing: the batch committed but its answer could not be read")

// statementFor is sql prepared on c: prepared once per connection and kept
// in its custom data under its text, so a batch costs no Prepare call
// (nor its span).
func statementFor(ctx context.Context, c *pgx.Conn, sql string) (*pgconn.StatementDescription, error) {
	data := c.PgConn().CustomData()
	if sd, ok := data[sql].(*pgconn.StatementDescription); ok {
		return sd, nil
	}
	sd, err := c.Prepare(ctx, sql, sql)
	if err != nil {
		return nil, err
	}
	data[sql] = sd
	return sd, nil
}
