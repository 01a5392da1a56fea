package catalog

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/pgvector/pgvector-go"
)

// sqlBuilder assembles the dynamic search statements. Values only ever
// travel as $n arguments; the SQL text is made of the constants and column
// names in this file, chosen by validated enums.
type sqlBuilder struct {
	args  []any
	conds []string
}

// arg adds a value and returns its placeholder.
func (b *sqlBuilder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

func (b *sqlBuilder) where(cond string) { b.conds = append(b.conds, cond) }

func (b *sqlBuilder) whereSQL() string { return strings.Join(b.conds, "\n\t  AND ") }

func (b *sqlBuilder) clone() *sqlBuilder {
	return &sqlBuilder{args: slices.Clone(b.args), conds: slices.Clone(b.conds)}
}

// statement is one SQL text with its arguments.
type statement struct {
	sql  string
	args []any
}

// searchSQL is what a search runs: the page (one row more than the limit,
// which tells whether there is a next page) and the capped count.
type searchSQL struct {
	page  statement
	count statement
	// window is how far the count goes: a total above it is reported as
	// the window, not exact.
	window int
}

// maxPrefixTerms bounds the words turned into prefix matches.
const maxPrefixTerms = 16

// buildSearch turns a validated query into SQL. vec and model are the
// query embedding and its model when q.SemanticSearch is set.
func buildSearch(q Query, vec []float32, model string) searchSQL {
	b := &sqlBuilder{}
	b.where("v.retired_at IS NULL")
	eq := func(col, val string) {
		if val != "" {
			b.where(col + " = " + b.arg(val))
		}
	}
	eq("v.emotion", q.Emotion)
	eq("v.gender", q.Gender)
	eq("v.age_range", q.AgeRange)
	eq("v.location", q.Location)
	eq("v.media_type", q.MediaType)
	eq("v.orientation", q.Orientation)
	eq("v.difficulty", q.Difficulty)
	eq("v.model_id", q.ModelID)
	// A clip without a duration (an image) fails any duration bound.
	if q.MinDuration != nil {
		b.where("v.duration_seconds >= " + b.arg(*q.MinDuration))
	}
	if q.MaxDuration != nil {
		b.where("v.duration_seconds <= " + b.arg(*q.MaxDuration))
	}
	if q.MinVirality != nil {
		b.where("v.virality_score >= " + b.arg(*q.MinVirality))
	}
	if q.Owned != nil {
		owned := "EXISTS (SELECT 1 FROM purchases p WHERE p.video_id = v.id AND p.api_key_id = " + b.arg(q.KeyID) + ")"
		if !*q.Owned {
			owned = "NOT " + owned
		}
		b.where(owned)
	}

	rank := ""
	if q.Search != "" {
		tsq := "websearch_to_tsquery('english', " + b.arg(q.Search) + ")"
		if p := prefixTSQuery(q.Search); p != "" {
			tsq = "(" + tsq + " || to_tsquery('english', " + b.arg(p) + "))"
		}
		b.where("v.search_tsv @@ " + tsq)
		rank = "ts_rank(v.search_tsv, " + tsq + ")"
	}
	if q.SemanticSearch != "" {
		// Only vectors of the query's model are comparable with it.
		b.where("v.embedding_status = 'ready'")
		b.where("v.embedding_model = " + b.arg(model))
	}

	// The count stops one past the window a client can page through:
	// beyond it only "more than that" matters, and counting every row of a
	// large catalog would cost more than the page itself. A ranked
	// semantic search pages through the nearest MaxSemanticWindow clips,
	// so that is as far as its count goes.
	window := MaxResultWindow
	if q.semanticRanked() {
		window = MaxSemanticWindow
	}
	c := b.clone()
	count := statement{
		sql:  "SELECT count(*) FROM (SELECT 1 FROM videos v WHERE " + c.whereSQL() + " LIMIT " + c.arg(window+1) + ") matches",
		args: c.args,
	}

	if q.semanticRanked() {
		return searchSQL{page: nearestSQL(b, q, vec), count: count, window: window}
	}
	similarity := "NULL::float8"
	if q.SemanticSearch != "" {
		similarity = "1 - (v.embedding <=> " + b.arg(pgvector.NewVector(vec)) + ")"
	}
	sql := "SELECT " + videoColumns + ", " + similarity + `
	FROM videos v JOIN tiers t ON t.name = v.difficulty
	WHERE ` + b.whereSQL() + `
	ORDER BY ` + orderSQL(q, rank)
	sql += "\n\tLIMIT " + b.arg(q.Limit+1) + " OFFSET " + b.arg(q.Offset)
	return searchSQL{page: statement{sql: sql, args: b.args}, count: count, window: window}
}

// nearestSQL finds the clips nearest to the query vector. The inner query
// is the shape the HNSW index serves (ORDER BY distance LIMIT n over videos
// alone, the filters checked as the index yields rows); with iterative
// scans in relaxed order it may return them slightly out of order, so the
// outer query sorts them again. MATERIALIZED keeps the planner from
// merging the two, which would hide the LIMIT from the index scan.
func nearestSQL(b *sqlBuilder, q Query, vec []float32) statement {
	dist := "v.embedding <=> " + b.arg(pgvector.NewVector(vec))
	sql := `
	WITH nearest AS MATERIALIZED (
		SELECT v.id, ` + dist + ` AS distance
		FROM videos v
		WHERE ` + b.whereSQL() + `
		ORDER BY distance
		LIMIT ` + b.arg(q.Offset+q.Limit+1) + `
	)
	SELECT ` + videoColumns + `, 1 - n.distance
	FROM nearest n JOIN videos v ON v.id = n.id JOIN tiers t ON t.name = v.difficulty
	ORDER BY n.distance, v.id
	OFFSET ` + b.arg(q.Offset)
	return statement{sql: sql, args: b.args}
}

// orderSQL is the ORDER BY of a listing. Ties (and clips without the sort
// value, which come last either way) are broken by recency and id, so that
// pages never overlap or skip a clip.
func orderSQL(q Query, rank string) string {
	dir := " DESC"
	if q.SortOrder == SortAsc {
		dir = " ASC"
	}
	const tail = "v.created_at DESC, v.id DESC"
	switch q.SortBy {
	case SortPrice:
		return "t.price_cents" + dir + ", " + tail
	case SortDuration:
		return "v.duration_seconds" + dir + " NULLS LAST, " + tail
	case SortVirality:
		return "v.virality_score" + dir + " NULLS LAST, " + tail
	case SortRelevance:
		if rank != "" {
			return rank + " DESC, " + tail
		}
	}
	return "v.created_at" + dir + ", v.id" + dir
}

// prefixTSQuery turns the words of a plain keyword query into a tsquery
// that requires each of them as a word prefix ("coff" finds "coffee"), to
// be OR-ed with websearch_to_tsquery of the same text. A query that uses
// websearch operators (quotes, "or", a leading "-") gets none: OR-ing it
// would let back what a "-word" excluded. The result holds only letters,
// digits and tsquery operators, so it cannot be malformed.
func prefixTSQuery(search string) string {
	var terms []string
	for _, f := range strings.Fields(search) {
		if strings.ContainsRune(f, '"') || strings.HasPrefix(f, "-") || strings.EqualFold(f, "or") {
			return ""
		}
		words := strings.FieldsFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		for _, w := range words {
			if len(terms) == maxPrefixTerms {
				return strings.Join(terms, " & ")
			}
			terms = append(terms, strings.ToLower(w)+":*")
		}
	}
	return strings.Join(terms, " & ")
}
