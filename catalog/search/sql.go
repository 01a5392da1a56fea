package search

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/google/uuid"
	"github.com/pgvector/pgvector-go"

	"broll/catalog"
	"broll/internal/paging"
)

// The search statements are built on a paging.Builder. Values travel as
// $n arguments; the SQL text is made of the constants and column names in
// this file, chosen by validated enums, plus (for semantic rankings) an
// emotion from catalog.Emotions() and the page's integer bounds.

// enumLiteral writes a validated enum value into the SQL text, quoted as a
// string constant (quotes doubled, although no enum value has one).
func enumLiteral(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }

// statement is one SQL text with its arguments.
type statement struct {
	sql  string
	args []any
}

// searchSQL is what a search runs: the page (one row more than the limit,
// which tells whether there is a next page; each row ends with its sort
// key, for the next cursor) and the capped count.
type searchSQL struct {
	page statement
	// walk, when set, is the page read from video_terms (keywordWalkSQL),
	// tried before page; walkIDs is its form that reads the page's ids
	// alone (walkUnder).
	walk, walkIDs *statement
	count         statement
	// estimate is EXPLAIN of count: how many rows match and what the
	// count would cost, without running it.
	estimate statement
	// window is how far the count goes: a total above it is reported as
	// the window, not exact.
	window int
	// planOnce says the page (a semantic ranking) runs on the plan its
	// connection made the first time, without the arguments
	// (Query.plainFilters): planning it anew is a good share of the
	// search's time, as videos has some thirty indexes to weigh.
	planOnce bool
	// parts, when set, are the estimates the total is composed from
	// instead of asking for estimate (composeParts).
	parts *composedParts
	// source, for a query whose vector is a clip's (SimilarTo), checks
	// that clip; it runs in the page's round trip, whose rows count only
	// if it passes.
	source *clipSource
}

// maxPrefixTerms bounds the words turned into prefix matches.
const maxPrefixTerms = 16

// buildSearch turns a validated query into SQL. vec and model are the
// vector the query is matched with and its model when it is matched by
// meaning (q.byVector): its text's embedding, or the stored vector of the
// clip q.SimilarTo; the statements are the same for either. The order of
// its steps is the order of the arguments ($n): conditions, then the
// count's bound, then what only the page uses.
func buildSearch(q Query, vec []float32, model string) searchSQL {
	b := &paging.Builder{}
	b.Where("v.retired_at IS NULL")
	addFilters(b, q)
	kw := addKeyword(b, q)
	if q.byVector() {
		// Only vectors of the query's model are comparable with it.
		b.Where("v.embedding_status = 'ready'")
		b.Where("v.embedding_model = " + b.Arg(model))
	}
	count, estimate := countStatements(b, kw)
	if q.SimilarTo != uuid.Nil {
		// A clip is not its own neighbour. The estimate leaves the
		// condition out: it changes the total by one at most, and so one
		// estimate (and the node's cache of it, keyed by the estimate)
		// serves the neighbours of every clip with these filters.
		b.Where("v.id <> " + b.Arg(q.SimilarTo))
		count, _ = countStatements(b, kw)
	}
	rank, rankQuery := "", kw.rankQuery
	if kw.rankWith != nil {
		// The words' own query is an argument of the rank alone, so it
		// is added after the count has taken its arguments.
		rankQuery = kw.rankWith()
	}
	if rankQuery != "" {
		rank = "ts_rank(v.search_tsv, " + rankQuery + ")"
	}
	var source *clipSource
	if q.SimilarTo != uuid.Nil {
		source = &clipSource{id: q.SimilarTo, model: model}
	}
	if q.semanticRanked() {
		return searchSQL{page: nearestSQL(b, q, vec), count: count, estimate: estimate, window: MaxSemanticWindow,
			planOnce: q.plainFilters(), source: source}
	}
	sq := searchSQL{count: count, estimate: estimate, window: MaxResultWindow, source: source, parts: composeParts(q)}
	similarity := "NULL::float8"
	if q.byVector() {
		similarity = "1 - (v.embedding_half <=> " + vectorSQL(b, q, vec) + ")"
	}
	if rank != "" && q.SortBy == SortRelevance {
		// The words (and the retired check), with or without plain
		// filters before them (addFilters): the walk serves it. Nothing
		// follows the words' condition but what a ranking by meaning adds.
		if q.SemanticSearch == "" && kw.cond >= 0 && b.Len() == kw.cond+1 && q.Owned == nil {
			words := prefixTerms(q.Search)
			words = words[:min(len(words), keywordWalkWords)]
			filter := b.AndOf(1, kw.cond)
			st := keywordWalkSQL(b.Clone(), q, words, kw.prefix, rankQuery, filter, false)
			ids := keywordWalkSQL(b.Clone(), q, words, kw.prefix, rankQuery, filter, true)
			sq.walk, sq.walkIDs = &st, &ids
		}
		sq.page = keywordRankedSQL(b, q, rank, similarity)
		return sq
	}
	sq.page = listPageSQL(b, q, rank, similarity)
	return sq
}

// addFilters adds the query's filters, each an equality or a bound on a
// column, and its owned filter (the catalog's ownership rule).
func addFilters(b *paging.Builder, q Query) {
	eq := func(col, val string) {
		if val != "" {
			b.Where(col + " = " + b.Arg(val))
		}
	}
	if q.Emotion != "" && q.semanticRanked() {
		// Each emotion has its own graph (a partial index), which a plan
		// made without the arguments can use only if the emotion is in
		// the text. It is one of catalog.Emotions() (Validate).
		b.Where("v.emotion = " + enumLiteral(q.Emotion))
	} else {
		eq("v.emotion", q.Emotion)
	}
	eq("v.gender", q.Gender)
	eq("v.age_range", q.AgeRange)
	eq("v.location", q.Location)
	eq("v.media_type", q.MediaType)
	eq("v.orientation", q.Orientation)
	eq("v.difficulty", q.Difficulty)
	eq("v.model_id", q.ModelID)
	// A clip without a duration (an image) fails any duration bound.
	if q.MinDuration != nil {
		b.Where("v.duration_seconds >= " + b.Arg(*q.MinDuration))
	}
	if q.MaxDuration != nil {
		b.Where("v.duration_seconds <= " + b.Arg(*q.MaxDuration))
	}
	if q.MinVirality != nil {
		b.Where("v.virality_score >= " + b.Arg(*q.MinVirality))
	}
	if q.Owned != nil {
		owned := catalog.OwnsSQL(b.Arg(q.KeyID), "v.id")
		if !*q.Owned {
			owned = "NOT " + owned
		}
		b.Where(owned)
	}
}

// keywordParts is what the keyword condition leaves for the rest of the
// statement.
type keywordParts struct {
	// cond is the index of the keyword condition in the builder's
	// conditions (-1: none, or not a prefix query).
	cond int
	// prefix is the prefix query's SQL ("" when the words make none).
	prefix string
	// rankQuery is the query a relevance rank scores against, when the
	// keyword condition already holds it; rankWith adds it later instead.
	rankQuery string
	rankWith  func() string
	// estimateWith is the keyword condition the planner is asked about
	// when it differs from the one that matches.
	estimateWith func(*paging.Builder) string
}

// addKeyword adds the condition of the query's words (q.Search).
func addKeyword(b *paging.Builder, q Query) keywordParts {
	kw := keywordParts{cond: -1}
	if q.Search == "" {
		return kw
	}
	p := prefixTSQuery(q.Search)
	if p == "" {
		tsq := "websearch_to_tsquery('english', " + b.Arg(q.Search) + ")"
		b.Where("v.search_tsv @@ " + tsq)
		kw.rankQuery = tsq
		return kw
	}
	// Every clip the words match, their prefixes match too, so the prefix
	// query alone finds the matches: the index then walks one AND of terms
	// instead of an OR of two. The rank counts whole words above prefixes.
	prefix := "to_tsquery('english', " + b.Arg(p) + ")"
	kw.prefix, kw.cond = prefix, b.Len()
	b.Where("v.search_tsv @@ " + prefix)
	// The planner knows how often each word occurs, but not how often its
	// prefixes do: it guesses a fixed share per prefix, far below the
	// truth for common words. The words OR-ed with their prefixes match
	// the same clips (a word is its own prefix) and are estimated from
	// what the planner knows.
	kw.estimateWith = func(e *paging.Builder) string {
		return "v.search_tsv @@ (websearch_to_tsquery('english', " + e.Arg(q.Search) + ") || " + prefix + ")"
	}
	if q.SortBy == SortRelevance {
		kw.rankWith = func() string {
			return "websearch_to_tsquery('english', " + b.Arg(q.Search) + ") || " + prefix
		}
	}
	return kw
}

// countStatements are the capped count of the matches and the planner's
// estimate of it. The count stops one past CountBound: beyond it the
// planner's estimate is the total (Search), as counting every row of a
// large catalog would cost more than the page itself.
func countStatements(b *paging.Builder, kw keywordParts) (count, estimate statement) {
	countSQL := func(c *paging.Builder) string {
		return "SELECT count(*) FROM (SELECT 1 FROM videos v WHERE " + c.And() + " LIMIT " + c.Arg(CountBound+1) + ") matches"
	}
	c := b.Clone()
	count = statement{sql: countSQL(c), args: c.Args()}
	estimate = statement{sql: "EXPLAIN (FORMAT JSON) " + count.sql, args: count.args}
	if kw.estimateWith != nil {
		e := b.Clone()
		e.Replace(kw.cond, kw.estimateWith(e))
		estimate = statement{sql: "EXPLAIN (FORMAT JSON) " + countSQL(e), args: e.Args()}
	}
	return count, estimate
}

// listPageSQL is a page of a list sorted by a column (or by rank when the
// sort asks for it), after the cursor if the query has one.
func listPageSQL(b *paging.Builder, q Query, rank, similarity string) statement {
	key, dir := sortKey(q, rank)
	o := paging.Order{Keys: []string{key}, ID: "v.id", Desc: dir == "DESC"}
	if q.after != nil {
		b.Where(o.After(b, q.after.Keys, q.after.ID))
	}
	pageWhere := ""
	if b.Len() > 0 {
		pageWhere = "\n\tWHERE " + b.And()
	}
	// With plain filters the bounds are written into the text: Postgres
	// then finds the plan it makes without the arguments as cheap as the
	// ones made for them, and keeps it (plan_cache_mode auto), so the
	// connection stops planning the statement. Given as arguments, a LIMIT
	// is costed as a tenth of the matches and the plan is made every time.
	limit, offset := strconv.Itoa(q.Limit+1), strconv.Itoa(q.Offset)
	if !q.plainFilters() {
		limit, offset = b.Limit(q.Limit), b.Arg(q.Offset)
	}
	order := o.By()
	sql := "SELECT " + catalog.ListedColumns + ", " + similarity + ", " + key + `
	FROM videos v` + pageWhere + `
	ORDER BY ` + order + `
	LIMIT ` + limit + " OFFSET " + offset
	if q.Offset > 0 && similarity == "NULL::float8" && indexOnlyPage(q, key, b.Len()) {
		// Deep in the list by offset: find the page's ids in the sort
		// index alone (an index-only scan over the skipped entries), then
		// read the rows of the page only, instead of fetching every
		// skipped row from the heap to throw it away.
		sql = `
	WITH page AS MATERIALIZED (
		SELECT v.id, ` + key + ` AS key
		FROM videos v` + pageWhere + `
		ORDER BY ` + order + `
		LIMIT ` + limit + " OFFSET " + offset + `
	)
	SELECT ` + catalog.ListedColumns + ", " + similarity + `, p.key
	FROM page p JOIN videos v ON v.id = p.id
	ORDER BY ` + paging.Order{Keys: []string{"p.key"}, ID: "v.id", Desc: o.Desc}.By()
	}
	return statement{sql: sql, args: b.Args()}
}

// indexOnlyPage says whether a list page's ids can be found in its sort
// index alone: the key is a column the index holds (not an expression,
// whose column Postgres would fetch from the heap), and the conditions
// (n of them, the retired check first) are at most an emotion, which the
// emotion's sort indexes (migration 00005) hold too.
func indexOnlyPage(q Query, key string, n int) bool {
	if key != "v.price_cents" && key != "v.created_at" {
		return false
	}
	return n == 1 || (n == 2 && q.Emotion != "" && q.Gender == "" && q.AgeRange == "" && q.Location == "" &&
		q.MediaType == "" && q.Orientation == "" && q.Difficulty == "" && q.ModelID == "" && q.plainFilters())
}

// keywordRankedSQL pages a keyword search by relevance. Ranking reads each
// candidate's tsvector: at most keywordScanCandidates matches are ranked, the
// first the full-text index yields, instead of every match of a common
// word. The candidates are ranked, sorted and cut to the page by id and
// rank alone; only the page's rows are then joined for their columns (a
// join before the sort fetched every candidate's row a second time).
func keywordRankedSQL(b *paging.Builder, q Query, rank, similarity string) statement {
	cands := `SELECT v.id, ` + rank + ` AS rank FROM videos v WHERE ` + b.And() + `
			LIMIT ` + b.Arg(keywordScanCandidates)
	after := ""
	if q.after != nil {
		after = "\n\t\tWHERE " + rankOrder("c").After(b, q.after.Keys, q.after.ID)
	}
	sql := "SELECT " + catalog.ListedColumns + ", " + similarity + `, m.rank
	FROM (
		SELECT c.id, c.rank FROM (` + cands + `) c` + after + `
		ORDER BY ` + rankOrder("c").By() + `
		LIMIT ` + b.Limit(q.Limit) + " OFFSET " + b.Arg(q.Offset) + `
	) m JOIN videos v ON v.id = m.id
	ORDER BY m.rank DESC, v.id DESC`
	return statement{sql: sql, args: b.Args()}
}

// rankOrder is a keyword ranking's order over the rows named alias: best
// first, ties by id.
func rankOrder(alias string) paging.Order {
	return paging.Order{Keys: []string{alias + ".rank"}, ID: alias + ".id", Desc: true}
}

// keywordScanCandidates bounds the matches a keyword search served by the
// full-text index ranks by relevance (with filters, or words rare
// together): the first that many matches are ranked and paged, all of them
// when fewer match. A common word would otherwise cost a read of every row
// it is in.
const keywordScanCandidates = 1000

// CountBound is how far a search counts its matches exactly: past it the
// total is the planner's estimate (total_exact false). Counting stops at
// a thousand index entries, so the count costs less than the page.
const CountBound = 1000

// nearestSQL finds the clips nearest to the query vector. The inner query
// is the shape the HNSW index serves (ORDER BY distance LIMIT n over videos
// alone, the filters checked as the index yields rows) on the clips'
// stored halfvecs (embedding_half, migration 00031). It yields each
// candidate whole (the columns a page shows, read from the row the walk
// has already fetched) with its distance, which Postgres computes anyway
// for the ORDER BY from the halfvec in that row: the page and one more (a
// next page exists), no more. With iterative scans in relaxed order a
// walk that resumes for more candidates may yield them slightly out of
// order, so the outer query puts them in order: by that distance, then id.
// Asking for more candidates than the page (10 more, until 2026-11-29)
// made a filtered walk resume for a second batch on most searches, for
// recall the candidate list buys more cheaply (calibrate.go;
// docs/performance.md). The order, the similarity
// shown and the cursor all use the halfvec distance, one deterministic
// value per clip and query, so pages meet without gaps or repeats; it is
// within about 1e-4 of the full vector's (docs/api.md). MATERIALIZED keeps
// the planner from merging the two, which would hide the LIMIT from the
// index scan. After a cursor the walk takes the clips up to it again (they
// are at most the window) and the outer query passes over them.
//
// The index query's LIMIT is written into the text, as the emotion is
// (buildSearch), so that a plan made once, without the arguments, still
// sees how few rows it wants and which graph serves them: see
// searchSQL.planOnce.
func nearestSQL(b *paging.Builder, q Query, vec []float32) statement {
	dist := "v.embedding_half <=> " + vectorSQL(b, q, vec)
	before := q.Offset
	if q.after != nil {
		before = q.after.N
	}
	inner := b.And()
	// The candidates' columns, named c1 (the id) to cN.
	names := make([]string, catalog.ListedColumnCount)
	for i := range names {
		names[i] = "c" + strconv.Itoa(i+1)
	}
	// Nearest first, ties by id.
	o := paging.Order{Keys: []string{"n.distance"}, ID: "n.c1"}
	after := ""
	if q.after != nil {
		after = "\n\tWHERE " + o.After(b, q.after.Keys, q.after.ID)
	}
	sql := `
	WITH nearest (` + strings.Join(names, ", ") + `, distance) AS MATERIALIZED (
		SELECT ` + catalog.ListedColumns + `, ` + dist + `
		FROM videos v
		WHERE ` + inner + `
		ORDER BY ` + dist + `
		LIMIT ` + strconv.Itoa(before+q.Limit+1) + `
	)
	SELECT n.` + strings.Join(names, ", n.") + `, 1 - n.distance, n.distance
	FROM nearest n` + after + `
	ORDER BY ` + o.By() + `
	LIMIT ` + b.Limit(q.Limit) + ` OFFSET ` + b.Arg(q.Offset)
	return statement{sql: sql, args: b.Args()}
}

// vectorSQL is the query's vector in SQL, as a halfvec (what the graphs
// hold): an argument holding a text's embedding, or, for q.SimilarTo, a
// subquery reading the clip's stored halfvec, which Postgres runs once (an
// InitPlan) before the walk. So the clip's vector is read in the page's
// own round trip, and the statements are otherwise the semantic search's.
func vectorSQL(b *paging.Builder, q Query, vec []float32) string {
	if q.SimilarTo != uuid.Nil {
		return "(SELECT s.embedding_half FROM videos s WHERE s.id = " + b.Arg(q.SimilarTo) + ")"
	}
	return b.Arg(pgvector.NewHalfVector(vec)) + "::halfvec(768)"
}

// sortKey is the sort key of a listing and its direction; the listing is
// ordered by (key, id) in that direction, which the indexes of migration
// 00005 yield in order (the expressions here are theirs, character for
// character). Clips without a duration or virality score come last in
// either direction: their key is past the end of the order.
func sortKey(q Query, rank string) (key, dir string) {
	desc := q.SortOrder != SortAsc
	dir = "ASC"
	if desc {
		dir = "DESC"
	}
	switch q.SortBy {
	case SortPrice:
		return "v.price_cents", dir
	case SortDuration:
		if desc {
			return "coalesce(v.duration_seconds, '-1'::float8)", dir
		}
		return "coalesce(v.duration_seconds, 'Infinity'::float8)", dir
	case SortVirality:
		if desc {
			return "coalesce(v.virality_score, -1)", dir
		}
		return "coalesce(v.virality_score, 101)", dir
	case SortRelevance:
		if rank != "" {
			return rank, "DESC"
		}
	}
	return "v.created_at", dir
}

// prefixTSQuery turns the words of a plain keyword query into a tsquery
// that requires each of them as a word prefix ("coff" finds "coffee"). A
// query that uses websearch operators (quotes, "or", a leading "-") gets
// none: widening it would let back what a "-word" excluded. The result
// holds only letters, digits and tsquery operators, so it cannot be
// malformed.
func prefixTSQuery(search string) string {
	terms := prefixTerms(search)
	for i, t := range terms {
		terms[i] = t + ":*"
	}
	return strings.Join(terms, " & ")
}

// prefixTerms are the words of a plain keyword query, lower-cased and cut
// at anything but letters and digits, at most maxPrefixTerms; none for a
// query with websearch operators.
func prefixTerms(search string) []string {
	var terms []string
	for _, f := range strings.Fields(search) {
		if strings.ContainsRune(f, '"') || strings.HasPrefix(f, "-") || strings.EqualFold(f, "or") {
			return nil
		}
		words := strings.FieldsFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		for _, w := range words {
			if len(terms) == maxPrefixTerms {
				return terms
			}
			terms = append(terms, strings.ToLower(w))
		}
	}
	return terms
}
