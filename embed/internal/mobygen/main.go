// Command mobygen builds the built-in embedder's thesaurus table
// (embed/lexicon/moby.tsv.gz) from the Moby Thesaurus II (public domain):
// for every word and phrase of one to three words that the thesaurus
// lists, how many of its synonyms are phrases of each concept of the
// embedder's vocabulary (internal/vocab, its phrases and its thesaurus's
// synonyms whole, its related words by vocab.RelatedGrade). It runs only
// when the table is regenerated (`make embed-lexicon`, which fetches the
// thesaurus); the build and the tests read the committed file.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"broll/internal/vocab"
	"broll/internal/words"
)

// maxTokens is the longest phrase kept: longer ones never meet a query.
const maxTokens = 3

func main() {
	in := flag.String("thesaurus", "", "the Moby Thesaurus II file (one root and its synonyms a line, split by commas)")
	out := flag.String("out", "embed/lexicon/moby.tsv.gz", "table to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "mobygen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	if in == "" {
		return errors.New("no thesaurus file (-thesaurus; `make embed-lexicon` fetches it and sets BROLL_MOBY)")
	}
	f, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("read the thesaurus: %w", err)
	}
	defer f.Close()
	// neighbours holds for each phrase its synonyms and the roots that
	// list it: Moby lists a word under its root without always listing
	// the root under the word.
	neighbours := map[string]map[string]bool{}
	add := func(a, b string) {
		if neighbours[a] == nil {
			neighbours[a] = map[string]bool{}
		}
		neighbours[a][b] = true
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		root := phrase(fields[0])
		if root == "" {
			continue
		}
		for _, s := range fields[1:] {
			if s := phrase(s); s != "" && s != root {
				add(root, s)
				add(s, root)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}

	grade := conceptGrades()
	var buf bytes.Buffer
	names := make([]string, len(vocab.Concepts))
	for i, c := range vocab.Concepts {
		names[i] = c.Name
	}
	// The header names the concepts, so a table is read by name whatever
	// the vocabulary's order.
	buf.WriteString("broll-moby-1\t" + strings.Join(names, "\t") + "\n")
	terms := make([]string, 0, len(neighbours))
	for t := range neighbours {
		if len(strings.Fields(t)) <= maxTokens {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	kept := 0
	for _, t := range terms {
		hits := make([]float64, len(vocab.Concepts))
		for s := range neighbours[t] {
			for ci, g := range grade[s] {
				hits[ci] += g
			}
		}
		line := ""
		for ci, h := range hits {
			// One related word alone says nothing.
			if h >= 1 {
				line += "\t" + strconv.Itoa(ci) + ":" + strconv.FormatFloat(h, 'f', -1, 64)
			}
		}
		if line == "" {
			continue
		}
		kept++
		fmt.Fprintf(&buf, "%s\t%d%s\n", t, len(neighbours[t]), line)
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(buf.Bytes()); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(out, gz.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "mobygen: %d phrases, %d bytes (%d uncompressed) -> %s\n", kept, gz.Len(), buf.Len(), out)
	return nil
}

// conceptGrades maps each phrase of the vocabulary and its thesaurus to
// the concepts it means and how fully.
func conceptGrades() map[string]map[int]float64 {
	out := map[string]map[int]float64{}
	set := func(p string, ci int, g float64) {
		p = phrase(p)
		if p == "" {
			return
		}
		if out[p] == nil {
			out[p] = map[int]float64{}
		}
		out[p][ci] = max(out[p][ci], g)
	}
	index := map[string]int{}
	for ci, c := range vocab.Concepts {
		index[c.Name] = ci
		for _, p := range c.Phrases {
			set(p, ci, 1)
		}
	}
	for _, e := range vocab.Thesaurus {
		for _, p := range e.Synonyms {
			set(p, index[e.Concept], 1)
		}
		for _, p := range e.Related {
			set(p, index[e.Concept], vocab.RelatedGrade)
		}
	}
	return out
}

// phrase is s as the embedder tokenizes it, words joined by spaces.
func phrase(s string) string { return strings.Join(words.Tokenize(s), " ") }
