package search

import (
	"context"
	"strconv"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
	"broll/internal/paging"
)

// A keyword search ranked by relevance (with plain filters or none, not
// by meaning nor by what the key owns) is served from video_terms
// (migration 00013), where each word's clips are indexed best first: for each of the query's first keywordWalkWords words
// (and, as a word is also a prefix, up to keywordExpansions indexed words
// it begins) the search
// walks that word's clips in order of impact, keeps those that match the
// whole query, and stops when it has walkDepth of them or after
// keywordWalkCap clips. The candidates are then ranked by ts_rank as
// before. No step reads every clip a common word is in: the first page of
// a two-word search costs a few hundred index entries whatever the
// catalog's size.
//
// A deeper page walks deeper (walkDepth), and its cursor keeps it after
// the rows already shown, so a page never repeats a clip; a clip the
// shallower walk of an earlier page had not reached may rank above that
// page's cursor and is then not shown, which is the price of not ranking
// every match.
//
// A search with filters walks the same way, up to keywordFilteredWalkCap
// clips, and checks each clip that matches the words against the
// filters in the posting, which holds the clip's filter columns
// (migration 00034): a filter costs the walk no read of videos, and a
// filter few clips pass costs a bounded walk before the full-text index
// answers instead.
//
// When the walks find too few candidates to fill the page, the words
// are rare together (or alone), or the filters pass few of their clips,
// and the full-text index, which then has few matches to hand back,
// serves the search instead (keywordRankedSQL), combined with the
// filters' indexes.
const (
	// keywordWalkWords is how many of the query's words are walked. Every
	// match has all of them, so the first words' walks find candidates
	// for the whole query; more walks would only cost more.
	keywordWalkWords = 2
	// keywordWalkCap bounds the clips each walk looks at: words that
	// rarely appear together stop here and go to the full-text index. With
	// keywordWalkWords and keywordExpansions it bounds a search's walking
	// at 8,000 index entries, whatever words a client sends.
	keywordWalkCap = 1000
	// keywordExpansions is how many indexed words a query word may stand
	// for as a prefix ("cook" also walks "cookbook" and "cooki"), taken
	// in byte order from the word itself.
	keywordExpansions = 4
	// keywordFilteredWalkCap is keywordWalkCap for a search with filters:
	// the walk's entries are cheap (the walk index alone, filters
	// included), and filters that few clips pass need more of them to
	// fill a page. A walk reads no further than it needs, so filters
	// most clips pass walk no deeper than without them.
	keywordFilteredWalkCap = 4000
)

// walkReach is how far into the ranking a page reaches.
func walkReach(q Query) int {
	if q.after != nil {
		return q.after.N + q.Limit
	}
	return q.Offset + q.Limit
}

// walkDepth is how many clips matching the whole query each of a search's
// walked words keeps for a page: together twice as many as the page
// reaches, so that the ranking has candidates past the page's edge, and
// each enough to fill the page alone.
func walkDepth(q Query, words int) int {
	reach := walkReach(q)
	return min(max(reach+1, (2*reach+words-1)/max(words, 1)), keywordScanCandidates)
}

// keywordWalkSQL is the page of a ranked keyword search read from
// video_terms. words are the query's words as typed (prefixTerms); match is
// the tsquery every result satisfies and rankQuery the one its relevance is
// ranked by (ts_rank), both as already built on b; filter is the search's
// other conditions on the clip's row (v), as built on b ("" for none). The last column of every row is the number of
// candidates; when the page is empty one row carries only that count
// (collectWalk). With idsOnly each row is the clip's id and rank alone,
// for a node that takes the clips from its copies (walkUnder), and the
// statement reads no row of videos.
func keywordWalkSQL(b *paging.Builder, q Query, words []string, match, rankQuery, filter string, idsOnly bool) statement {
	after := ""
	if q.after != nil {
		after = "\n\t\tWHERE " + rankOrder("r").After(b, q.after.Keys, q.after.ID)
	}
	depth := walkDepth(q, len(words))
	// A walk's matches, best first: of the word's first reach postings,
	// those with the whole query and, with filters, those that pass them.
	// The filters name the clip's columns as v, and each posting holds
	// those columns (migration 00034), so they are checked in the walk
	// index alone, as the words are.
	reach := keywordWalkCap
	if filter != "" {
		reach = keywordFilteredWalkCap
		filter += " AND "
	}
	// An emotion, which about one clip in thirteen has, is walked in its
	// own order of each word's postings (video_terms_walk_emotion).
	emotion := ""
	if q.Emotion != "" {
		emotion = " AND t.emotion = " + b.Arg(q.Emotion)
	}
	walked := `
				SELECT v.video_id, v.impact, v.doc FROM (
					SELECT t.* FROM video_terms t WHERE t.lexeme = x.lexeme` + emotion + `
					ORDER BY t.impact DESC, t.video_id DESC
					LIMIT ` + strconv.Itoa(reach) + `
				) v
				WHERE ` + filter + `ts_match_vq(v.doc, (SELECT match FROM query))`
	// Each posting carries its clip's whole search_tsv (doc, migrations
	// 00015 and 00033), so a walk checks the clips it passes against the
	// whole query in the walk index alone and stops at its LIMIT, and the
	// candidates are ranked from the same postings: videos is read for the
	// page's rows only (a retired clip has no postings). ts_match_vq is @@ as a function, which no index
	// serves, so the planner cannot turn the walk around into a full-text
	// scan of every match. The query and the rank's query are made once
	// (the query CTE), not once per clip: a reused (generic) plan does not
	// fold them into constants. The page's bounds are written into the
	// text, as the walk's are (and listPageSQL's): a plan made without the
	// arguments then costs what the plans made with them do, and
	// Postgres keeps it instead of planning every walk again, which
	// costs more than the walk itself.
	sql := `
	WITH words AS (
		SELECT DISTINCT l.lexeme COLLATE "C" AS lo
		FROM unnest(` + b.Arg(words) + `::text[]) w(word), unnest(to_tsvector('english', w.word)) l
	), lexemes AS (
		SELECT DISTINCT x.lexeme FROM words w CROSS JOIN LATERAL (
			WITH RECURSIVE r(lexeme, n) AS (
				(SELECT t.lexeme, 1 FROM video_terms t
				 WHERE t.lexeme >= w.lo AND t.lexeme < w.lo || chr(1114111) ORDER BY t.lexeme LIMIT 1)
				UNION ALL
				SELECT (SELECT t.lexeme FROM video_terms t
				        WHERE t.lexeme > r.lexeme AND t.lexeme < w.lo || chr(1114111) ORDER BY t.lexeme LIMIT 1), r.n + 1
				FROM r WHERE r.lexeme IS NOT NULL AND r.n < ` + strconv.Itoa(keywordExpansions) + `
			)
			SELECT r.lexeme FROM r WHERE r.lexeme IS NOT NULL
		) x
	), query AS MATERIALIZED (
		SELECT ` + match + ` AS match, ` + rankQuery + ` AS rank
	), candidates AS MATERIALIZED (
		SELECT DISTINCT ON (m.video_id) m.video_id, m.doc FROM lexemes x CROSS JOIN LATERAL (
			SELECT w.video_id, w.doc FROM (` + walked + `
			) w
			ORDER BY w.impact DESC, w.video_id DESC
			LIMIT ` + strconv.Itoa(depth) + `
		) m
	), ranked AS (
		SELECT c.video_id AS id, ts_rank(c.doc, (SELECT rank FROM query)) AS rank
		FROM candidates c
	), page AS (
		SELECT r.id, r.rank FROM ranked r` + after + `
		ORDER BY ` + rankOrder("r").By() + `
		LIMIT ` + strconv.Itoa(q.Limit+1) + " OFFSET " + strconv.Itoa(q.Offset) + `
	)
	`
	if idsOnly {
		sql += `
	SELECT m.id, m.rank, n.n
	FROM (SELECT count(*) AS n FROM ranked) n
	LEFT JOIN page m ON true
	ORDER BY m.rank DESC, m.id DESC`
	} else {
		sql += `
	SELECT ` + catalog.ListedColumns + `, NULL::float8, m.rank, n.n
	FROM (SELECT count(*) AS n FROM ranked) n
	LEFT JOIN page m ON true
	LEFT JOIN videos v ON v.id = m.id
	ORDER BY m.rank DESC, v.id DESC`
	}
	return statement{sql: sql, args: b.Args()}
}

// collectWalk reads keywordWalkSQL's rows: the page and the number of
// candidates the walks found.
func (s *Service) collectWalk(rows pgx.Rows, err error) ([]row, int, error) {
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []row
	n := 0
	for rows.Next() {
		if rows.RawValues()[0] == nil {
			// No page: the one row holds the count alone.
			vals, err := rows.Values()
			if err != nil {
				return nil, 0, err
			}
			if c, ok := vals[len(vals)-1].(int64); ok {
				n = int(c)
			}
			continue
		}
		var r row
		var c int64
		if r.video, err = s.catalog.ScanListed(rows, &r.key, &c); err != nil {
			return nil, 0, err
		}
		n = int(c)
		out = append(out, r)
	}
	return out, n, rows.Err()
}

// walkUnder runs the walk for its page's ids and ranks alone (walk is
// keywordWalkSQL's idsOnly form) and takes the clips from this node's
// copies made under catalog version v, which the request's admission pass
// gave (catalog.ListedUnder), as lists do: Postgres then reads no row of
// videos, and sends none. ok is false when a clip the walk found is not
// live under v (a standby behind the primary): the full walk answers.
//
// The clips are as the version the request was admitted under holds them,
// as a list's are; which clips match, and their ranks, are the walk's own
// reading. Only a write committed between the two, after the request was
// admitted, can tell them apart: that request may show a clip the write
// made match with its columns from before the write. A write committed
// before the admission has moved the version, and the full walk answers.
func (s *Service) walkUnder(ctx context.Context, db *pgxpool.Pool, walk statement, v string) (out []row, n int, ok bool, err error) {
	var ids []uuid.UUID
	var ranks []float32
	rows, err := db.Query(ctx, walk.sql, walk.args...)
	if err != nil {
		return nil, 0, false, err
	}
	var id pgtype.UUID
	var rank pgtype.Float4
	var count int64
	_, err = pgx.ForEachRow(rows, []any{&id, &rank, &count}, func() error {
		n = int(count)
		if id.Valid {
			ids, ranks = append(ids, id.Bytes), append(ranks, rank.Float32)
		}
		return nil
	})
	if err != nil {
		return nil, 0, false, err
	}
	videos, err := s.catalog.ListedUnder(ctx, ids, v)
	if err != nil || len(videos) != len(ids) {
		return nil, 0, false, err
	}
	out = make([]row, len(videos))
	for i, c := range videos {
		out[i] = row{video: c, key: ranks[i]}
	}
	return out, n, true, nil
}
