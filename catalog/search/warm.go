package search

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"broll/catalog"
)

// WarmOptions say how Warm readies a node's catalog for traffic.
type WarmOptions struct {
	// Connections is how many searches run at once. Each search runs on a
	// connection of its own, so about that many pool connections have
	// prepared and planned the statements of every query kind and mapped
	// the shared memory their walks touch (the cost a connection pays on
	// its first search of each kind). Below 1: 1.
	Connections int
	// Prewarm loads the catalog's relations into Postgres' shared buffers
	// with pg_prewarm before the searches, when the extension is installed
	// (migration 00022 installs it where it can): the HNSW graphs first,
	// then the clip rows, the list indexes, the keyword postings and the
	// out-of-line vectors, as far as PrewarmShare of shared_buffers goes.
	Prewarm bool
}

// PrewarmShare is the part of shared_buffers Warm fills at most: the rest
// stays for what the other tables (keys, purchases, the ledger) need.
const PrewarmShare = 0.75

// WarmReport says what a warm-up did.
type WarmReport struct {
	// Searches ran, of which Semantic were semantic searches; Graphs is
	// how many HNSW graphs they walked (the whole catalog's and each
	// emotion's).
	Searches, Semantic, Graphs int
	// PrewarmedBytes were loaded (or found) in shared buffers by
	// pg_prewarm; 0 when it is not installed or not asked for.
	PrewarmedBytes int64
	// Relations lists what pg_prewarm loaded, in order; Prewarm is how
	// long that took.
	Relations []string
	Prewarm   time.Duration
	// EmbedderErr is why semantic searches were left out: the embedder did
	// not answer (a model server down). The rest was warmed.
	EmbedderErr error
}

// warmFallbackTexts are the semantic and keyword queries of a warm-up when
// the catalog has no clips to take them from.
var warmFallbackTexts = []string{"person smiling at the camera", "coffee on a kitchen table"}

// warmTexts is how many of the newest clips' titles a warm-up searches for.
const warmTexts = 8

// Warm runs, before a node takes traffic, a search of every kind the API
// serves: a semantic search over each HNSW graph (the whole catalog's and
// each emotion's, alone and with a second filter), the query embedding
// through qe (its model and its cache), the default list, equality
// filters, the sorts, a deep page, keyword and prefix searches, the id
// lookup and the filter values. The texts are the newest clips' titles, so
// the walks start where the catalog's vectors are. A nil qe leaves out the
// semantic searches, and so does an embedder that fails (EmbedderErr): a
// model server that is down is no reason to keep a node out of service.
// The first error of a search ends the warm-up.
func (s *Service) Warm(ctx context.Context, qe QueryEmbedder, o WarmOptions) (WarmReport, error) {
	var r WarmReport
	if o.Prewarm {
		start := time.Now()
		var err error
		if r.PrewarmedBytes, r.Relations, err = s.prewarm(ctx); err != nil {
			return r, err
		}
		r.Prewarm = time.Since(start)
	}
	newest, err := s.Search(ctx, Query{}, nil)
	if err != nil {
		return r, fmt.Errorf("warm: %w", err)
	}
	texts := make([]string, 0, warmTexts)
	for _, v := range newest.Videos[:min(warmTexts, len(newest.Videos))] {
		texts = append(texts, warmText(v.Title))
	}
	if len(texts) == 0 {
		texts = warmFallbackTexts
	}
	if qe != nil {
		for _, t := range texts {
			if _, err := qe.EmbedQuery(ctx, t); err != nil {
				if ctx.Err() != nil {
					return r, ctx.Err()
				}
				r.EmbedderErr, qe = err, nil
				break
			}
		}
	}
	steps := warmSteps(newest.Videos, texts, qe != nil)
	for _, st := range steps {
		if st.q.SemanticSearch != "" {
			r.Semantic++
			if st.q.Gender == "" {
				r.Graphs++
			}
		}
	}
	// Every connection runs every step, each starting at another one, so
	// that the first searches do not all walk the same graph at once.
	conns := max(o.Connections, 1)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	for c := range conns {
		wg.Go(func() {
			for i := range steps {
				st := steps[(c*len(steps)/conns+i)%len(steps)]
				if err := s.runWarmStep(ctx, st, qe); err != nil {
					fail(fmt.Errorf("warm: %s: %w", st.name, err))
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		return r, first
	}
	r.Searches = conns * len(steps)
	// The filter values pass over every clip once; the node keeps them a
	// while, so one pass is what its first clients would pay.
	if _, err := s.Filters(ctx); err != nil {
		return r, fmt.Errorf("warm: filter values: %w", err)
	}
	return r, nil
}

// warmStep is one search of a warm-up, or an id lookup when id is set.
type warmStep struct {
	name string
	q    Query
	id   *catalog.Video
}

func (s *Service) runWarmStep(ctx context.Context, st warmStep, qe QueryEmbedder) error {
	if st.id != nil {
		_, err := s.catalog.GetVideo(ctx, st.id.ID)
		return err
	}
	_, err := s.Search(ctx, st.q, qe)
	return err
}

// warmSteps are the searches of a warm-up: each query kind of the API,
// with the filter values of the newest clips where there are some.
func warmSteps(newest []catalog.Video, texts []string, semantic bool) []warmStep {
	pick := func(i int) catalog.Video {
		if len(newest) == 0 {
			return catalog.Video{Emotion: catalog.Emotions()[0], Gender: catalog.Genders()[0]}
		}
		return newest[i%len(newest)]
	}
	text := func(i int) string { return texts[i%len(texts)] }
	words := keywordWords(texts)
	v := pick(1)
	orientation := catalog.Orientations()[0]
	if v.Orientation != nil {
		orientation = *v.Orientation
	}
	steps := []warmStep{
		{name: "list", q: Query{}},
		{name: "two filters", q: Query{Emotion: v.Emotion, Gender: v.Gender}},
		{name: "three filters by virality", q: Query{Emotion: v.Emotion, Gender: v.Gender, Orientation: orientation, SortBy: SortVirality}},
		{name: "by price, deep page", q: Query{SortBy: SortPrice, SortOrder: SortAsc, Offset: 49 * DefaultLimit}},
		{name: "by duration", q: Query{SortBy: SortDuration}},
		{name: "keyword", q: Query{Search: words[0] + " " + words[len(words)/2]}},
		{name: "keyword prefix", q: Query{Search: words[len(words)-1][:min(4, len(words[len(words)-1]))]}},
	}
	for i := range min(len(newest), 4) {
		steps = append(steps, warmStep{name: "id lookup", id: &newest[i]})
	}
	if !semantic {
		return steps
	}
	steps = append(steps, warmStep{name: "semantic", q: Query{SemanticSearch: text(0)}})
	for i, e := range catalog.Emotions() {
		steps = append(steps, warmStep{name: "semantic, emotion " + e, q: Query{SemanticSearch: text(i + 1), Emotion: e}})
	}
	steps = append(steps, warmStep{name: "semantic, emotion and gender",
		q: Query{SemanticSearch: text(2), Emotion: v.Emotion, Gender: v.Gender}})
	return steps
}

// warmText is a clip title as a query: its words, without the numbers a
// catalog's titles often end with.
func warmText(title string) string {
	f := strings.FieldsFunc(title, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	if len(f) == 0 {
		return warmFallbackTexts[0]
	}
	return strings.Join(f, " ")
}

// keywordWords are the words of texts worth a keyword search (four
// letters or more); never empty.
func keywordWords(texts []string) []string {
	var out []string
	for _, t := range texts {
		for _, w := range strings.Fields(t) {
			if len([]rune(w)) >= 4 {
				out = append(out, strings.ToLower(w))
			}
		}
	}
	if len(out) == 0 {
		return []string{"coffee"}
	}
	return out
}

// prewarm loads the relations of sqlWarmRelations into shared buffers in
// order, leaving out any that would overflow the room left. It returns the
// bytes loaded and the relations, or nothing when pg_prewarm is not
// installed.
func (s *Service) prewarm(ctx context.Context) (int64, []string, error) {
	var loaded int64
	var names []string
	// On the pool the catalog's reads go to: a replica's buffers are its own.
	err := s.catalog.Read(ctx, false, func(db *pgxpool.Pool) error {
		loaded, names = 0, nil
		var installed bool
		if err := db.QueryRow(ctx, sqlPrewarmInstalled).Scan(&installed); err != nil || !installed {
			return err
		}
		type relation struct {
			name       string
			size, room int64
		}
		rows, err := db.Query(ctx, sqlWarmRelations, PrewarmShare)
		if err != nil {
			return err
		}
		rels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (relation, error) {
			var rel relation
			var room float64
			err := r.Scan(&rel.name, &rel.size, &room)
			rel.room = int64(room)
			return rel, err
		})
		if err != nil {
			return err
		}
		for _, rel := range rels {
			if loaded+rel.size > rel.room {
				continue
			}
			if _, err := db.Exec(ctx, sqlPrewarm, rel.name); err != nil {
				return fmt.Errorf("%s: %w", rel.name, err)
			}
			loaded += rel.size
			names = append(names, rel.name)
		}
		return nil
	})
	if err != nil {
		return loaded, names, fmt.Errorf("prewarm: %w", err)
	}
	return loaded, names, nil
}
