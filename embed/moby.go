package embed

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed" // the thesaurus table
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
)

// mobyTable is generated from the Moby Thesaurus II by
// embed/internal/mobygen (`make embed-lexicon`); lexicon/README.md says
// what is in it, lexicon/LICENSE-Moby under which terms.
//
//go:generate go run ./internal/mobygen -thesaurus $BROLL_MOBY -out lexicon/moby.tsv.gz
//go:embed lexicon/moby.tsv.gz
var mobyTable []byte

const mobyMagic = "broll-moby-1"

const (
	// A query's word that no vocabulary phrase covers joins the concepts
	// its synonyms in the Moby thesaurus meet at least mobyRelative as
	// often as the concept they meet most: a word with hundreds of
	// synonyms touches many concepts once or twice, its meaning shows in
	// the one it meets most.
	mobyRelative = 0.5
	// It weighs mobyWeight times its hits over the square root of its
	// synonyms (three of nine synonyms mean the concept as surely as
	// thirty of a hundred), times the share of its hits that concept has
	// ("howling" meets sad, excited and angry, so none of them much), at
	// most the whole of a vocabulary phrase's weight.
	mobyWeight = 2.0
)

// mobyEntry is one thesaurus phrase: how many synonyms it has and, per
// concept it meets, how many of them are that concept's phrases.
type mobyEntry struct {
	synonyms int
	hits     []mobyHit
}

type mobyHit struct {
	concept int
	hits    float32
}

// mobyThesaurus maps phrases of one to three words, as spelled and by
// stems, to the concepts their synonyms meet.
type mobyThesaurus struct {
	exact, stemmed map[string]*mobyEntry
	maxTokens      int
}

// loadMoby parses the embedded table once per process.
var loadMoby = sync.OnceValue(func() *mobyThesaurus {
	m, err := parseMoby(mobyTable)
	if err != nil {
		// The file is part of the binary; a broken one is a build defect.
		panic(fmt.Sprintf("embed: moby thesaurus: %v", err))
	}
	return m
})

func parseMoby(data []byte) (*mobyThesaurus, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	if !sc.Scan() {
		return nil, errors.New("empty table")
	}
	header := strings.Split(sc.Text(), "\t")
	if header[0] != mobyMagic {
		return nil, fmt.Errorf("not a %s table", mobyMagic)
	}
	// The table names concepts; one the vocabulary no longer has is
	// left out (regenerate the table when the vocabulary changes).
	concept := make([]int, len(header)-1)
	for i, name := range header[1:] {
		concept[i] = -1
		for ci, c := range vocabulary {
			if c.Name == name {
				concept[i] = ci
			}
		}
	}
	m := &mobyThesaurus{exact: map[string]*mobyEntry{}, stemmed: map[string]*mobyEntry{}}
	for sc.Scan() {
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) < 3 {
			return nil, fmt.Errorf("bad line %q", sc.Text())
		}
		n, err := strconv.Atoi(fields[1])
		if err != nil {
			return nil, err
		}
		e := &mobyEntry{synonyms: n}
		for _, f := range fields[2:] {
			ci, h, ok := strings.Cut(f, ":")
			i, err1 := strconv.Atoi(ci)
			x, err2 := strconv.ParseFloat(h, 32)
			if !ok || err1 != nil || err2 != nil || i < 0 || i >= len(concept) {
				return nil, fmt.Errorf("bad hit %q", f)
			}
			if concept[i] >= 0 {
				e.hits = append(e.hits, mobyHit{concept[i], float32(x)})
			}
		}
		toks := strings.Fields(fields[0])
		m.maxTokens = max(m.maxTokens, len(toks))
		m.exact[fields[0]] = e
		// The table is sorted, so the first phrase of a stem keeps it.
		if sk := strings.Join(stems(toks), " "); m.stemmed[sk] == nil {
			m.stemmed[sk] = e
		}
	}
	return m, sc.Err()
}

// lookup finds the longest thesaurus phrase starting at token i of
// tokens no vocabulary phrase covered; it returns how many tokens it
// covers (0 when none).
func (m *mobyThesaurus) lookup(toks, sts []string, covered []coverage, i int, stop map[string]bool) (int, *mobyEntry) {
	for n := min(m.maxTokens, len(toks)-i); n >= 1; n-- {
		if n == 1 && (len(toks[i]) < 2 || stop[toks[i]]) {
			return 0, nil
		}
		free := true
		for j := i; j < i+n; j++ {
			free = free && covered[j] == uncovered
		}
		if !free {
			continue
		}
		if e := m.exact[strings.Join(toks[i:i+n], " ")]; e != nil {
			return n, e
		}
		if e := m.stemmed[strings.Join(sts[i:i+n], " ")]; e != nil {
			return n, e
		}
	}
	return 0, nil
}

// addMoby joins the words of a query that no vocabulary phrase covered
// to the concepts their Moby synonyms meet ("at loggerheads" to angry).
// A concept WordNet already joined the same words to (linked, from
// addMeanings) keeps the heavier of the two weights: the two resources
// say the same thing twice, and no word counts more than a vocabulary
// phrase.
func (b *Builtin) addMoby(tf *textFeatures, toks, sts []string, covered []coverage, linked []map[int]float64, kind Kind) {
	if kind != Query {
		return
	}
	m := loadMoby()
	for i := 0; i < len(toks); {
		n, e := m.lookup(toks, sts, covered, i, b.stop)
		if n == 0 {
			i++
			continue
		}
		var best, sum float32
		for _, h := range e.hits {
			best = max(best, h.hits)
			sum += h.hits
		}
		for _, h := range e.hits {
			if h.hits >= mobyRelative*best {
				w := conceptWeight * min(1, mobyWeight*float64(h.hits/sum)*float64(h.hits)/math.Sqrt(float64(e.synonyms)))
				var had float64
				for j := i; j < i+n && linked != nil; j++ {
					had = max(had, linked[j][h.concept])
				}
				tf.concepts[h.concept] += max(0, w-had)
			}
		}
		i += n
	}
}
