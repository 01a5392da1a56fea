package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"broll/internal/words"
)

// synsetID is a synset's part of speech (n, v, a or r; satellites are a)
// and its byte offset in that data file: unique across the database.
type synsetID struct {
	pos    byte
	offset int
}

// pointer is one relation from a synset (wndb(5WN): "@" hypernym, "&"
// similar to, "+" derivation, ...).
type pointer struct {
	symbol string
	target synsetID
}

type synset struct {
	lexFile   int
	satellite bool
	words     []string // as written, case kept
	pointers  []pointer
	gloss     string // the definition, without the examples
}

// sense is one meaning of a lemma: its synset and how often it was seen in
// the tagged corpus that orders WordNet's senses (cntlist.rev).
type sense struct {
	synset synsetID
	rank   int // 1-based, in the index file's order (most frequent first)
	count  int
}

type wordnet struct {
	synsets    map[synsetID]*synset
	senses     map[string][]sense  // lemma (lower case, underscores) -> senses of every part of speech
	exceptions map[string][]string // "form/pos" -> base forms (ran/v -> run)
	topSenses  map[string]synsetID // memo of topSense; the zero ID for none
}

var posFiles = []struct {
	pos  byte
	name string
}{{'n', "noun"}, {'v', "verb"}, {'a', "adj"}, {'r', "adv"}}

// readWordNet loads the database files of WordNet 3.0 from dir
// (/usr/share/wordnet on Debian).
func readWordNet(dir string) (*wordnet, error) {
	wn := &wordnet{synsets: map[synsetID]*synset{}, senses: map[string][]sense{}, exceptions: map[string][]string{}, topSenses: map[string]synsetID{}}
	for _, pf := range posFiles {
		if err := eachLine(filepath.Join(dir, "data."+pf.name), func(line string) error {
			return wn.addSynset(pf.pos, line)
		}); err != nil {
			return nil, err
		}
	}
	counts, err := readCounts(filepath.Join(dir, "cntlist.rev"))
	if err != nil {
		return nil, err
	}
	for _, pf := range posFiles {
		if err := eachLine(filepath.Join(dir, "index."+pf.name), func(line string) error {
			return wn.addIndex(pf.pos, line, counts)
		}); err != nil {
			return nil, err
		}
		if err := eachLine(filepath.Join(dir, pf.name+".exc"), func(line string) error {
			f := strings.Fields(line)
			if len(f) >= 2 {
				key := f[0] + "/" + string(pf.pos)
				wn.exceptions[key] = append(wn.exceptions[key], f[1:]...)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return wn, nil
}

// addSynset parses one line of a data file:
// offset lex_filenum ss_type w_cnt word lex_id ... p_cnt ptr ... | gloss
func (wn *wordnet) addSynset(pos byte, line string) error {
	if strings.HasPrefix(line, "  ") {
		return nil // the licence header
	}
	head, gloss, _ := strings.Cut(line, " | ")
	f := strings.Fields(head)
	bad := func(what string) error { return fmt.Errorf("data line %.40q: %s", line, what) }
	if len(f) < 6 {
		return bad("too short")
	}
	offset, err1 := strconv.Atoi(f[0])
	lexFile, err2 := strconv.Atoi(f[1])
	wcnt, err3 := strconv.ParseInt(f[3], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return bad("bad number")
	}
	def, _, _ := strings.Cut(gloss, "\"")
	s := &synset{lexFile: lexFile, satellite: f[2] == "s", gloss: strings.TrimRight(def, " ;")}
	i := 4
	for range wcnt {
		if i+1 >= len(f) {
			return bad("words")
		}
		w := f[i]
		if p := strings.IndexByte(w, '('); p > 0 { // adjective markers: (a), (p), (ip)
			w = w[:p]
		}
		s.words = append(s.words, w)
		i += 2
	}
	pcnt, err := strconv.Atoi(f[i])
	if err != nil {
		return bad("pointer count")
	}
	i++
	for range pcnt {
		if i+3 >= len(f) {
			return bad("pointers")
		}
		off, err := strconv.Atoi(f[i+1])
		if err != nil {
			return bad("pointer offset")
		}
		s.pointers = append(s.pointers, pointer{symbol: f[i], target: synsetID{pos: normPOS(f[i+2][0]), offset: off}})
		i += 4
	}
	wn.synsets[synsetID{pos: pos, offset: offset}] = s
	return nil
}

// addIndex parses one line of an index file:
// lemma pos synset_cnt p_cnt ptr_symbol... sense_cnt tagsense_cnt offset...
func (wn *wordnet) addIndex(pos byte, line string, counts map[string]int) error {
	if strings.HasPrefix(line, "  ") {
		return nil
	}
	f := strings.Fields(line)
	if len(f) < 6 {
		return fmt.Errorf("index line %.40q: too short", line)
	}
	n, err1 := strconv.Atoi(f[2])
	p, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || len(f) != 4+p+2+n {
		return fmt.Errorf("index line %.40q: bad counts", line)
	}
	lemma := f[0]
	for r, o := range f[len(f)-n:] {
		off, err := strconv.Atoi(o)
		if err != nil {
			return fmt.Errorf("index line %.40q: bad offset", line)
		}
		key := fmt.Sprintf("%s%%%c%d", lemma, pos, r+1)
		wn.senses[lemma] = append(wn.senses[lemma], sense{
			synset: synsetID{pos: pos, offset: off}, rank: r + 1, count: counts[key],
		})
	}
	return nil
}

// readCounts sums cntlist.rev's tag counts by lemma, part of speech and
// sense number, keyed "lemma%<pos><n>" as addIndex asks for them.
func readCounts(path string) (map[string]int, error) {
	out := map[string]int{}
	err := eachLine(path, func(line string) error {
		f := strings.Fields(line)
		if len(f) != 3 {
			return fmt.Errorf("cntlist line %q", line)
		}
		lemma, rest, ok := strings.Cut(f[0], "%")
		if !ok || rest == "" {
			return fmt.Errorf("cntlist sense key %q", f[0])
		}
		pos := map[byte]byte{'1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a'}[rest[0]]
		cnt, err := strconv.Atoi(f[2])
		if pos == 0 || err != nil {
			return fmt.Errorf("cntlist line %q", line)
		}
		out[fmt.Sprintf("%s%%%c%s", lemma, pos, f[1])] += cnt
		return nil
	})
	return out, err
}

func normPOS(p byte) byte {
	if p == 's' {
		return 'a'
	}
	return p
}

func eachLine(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := fn(sc.Text()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// phrase turns a WordNet lemma into the words the embedder's tokenizer
// makes of text ("driver's_seat" -> "drivers seat").
func phrase(lemma string) string { return strings.Join(words.Tokenize(lemma), " ") }
