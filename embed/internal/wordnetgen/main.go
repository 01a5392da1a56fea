// Command wordnetgen builds the built-in embedder's lexicon
// (embed/lexicon/wordnet.bin.gz) from WordNet 3.0: for every word and short
// collocation, its senses and the meanings (synsets) each shares with
// other words through synonymy, hypernymy and related forms, those the
// embedder's vocabulary (internal/vocab) carries first. It runs only
// when the lexicon is regenerated (`make embed-lexicon`, which needs
// Debian's wordnet-base); the build and the tests read the committed file.
package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "WordNet 3.0 database directory")
	out := flag.String("out", "embed/lexicon/wordnet.bin.gz", "lexicon file to write")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		fmt.Fprintln(os.Stderr, "wordnetgen:", err)
		os.Exit(1)
	}
}

func run(dict, out string) error {
	wn, err := readWordNet(dict)
	if err != nil {
		return fmt.Errorf("read wordnet (apt-get install wordnet-base): %w", err)
	}
	entries := buildLexicon(wn)

	raw := encode(entries, exceptions(wn, entries))
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(out, gz.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wordnetgen: %d phrases, %d bytes (%d uncompressed) -> %s\n",
		len(entries), gz.Len(), len(raw), out)
	return nil
}

// exceptions lists WordNet's irregular forms (ran -> run, geese -> goose)
// by part of speech, where the base is in the lexicon in that part of
// speech.
func exceptions(wn *wordnet, entries []entry) map[string][]string {
	have := map[string]bool{}
	for _, e := range entries {
		have[e.phrase+"/"+string(e.pos)] = true
	}
	out := map[string][]string{}
	for key, bases := range wn.exceptions {
		form, pos, _ := strings.Cut(key, "/")
		f := phrase(form)
		if strings.Contains(f, " ") {
			continue
		}
		for _, b := range bases {
			if b := phrase(b); have[b+"/"+pos] && b != f && !slices.Contains(out[f+"/"+pos], b) {
				out[f+"/"+pos] = append(out[f+"/"+pos], b)
			}
		}
	}
	return out
}
