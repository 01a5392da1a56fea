package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"broll/catalog"
	"broll/deploy/bench/benchkit"
	"broll/embed"
)

// A text-vectors directory holds what a real text embedder made of the
// benchmark's own clips and queries, so that recall and the index settings
// can be judged on a model's vectors rather than drawn ones:
//
//	clips.tsv, queries.tsv   written by -texts: "i<TAB>text" per line, the
//	                         clips in the order loadCatalog generates them
//	clips.f32, queries.f32   written by the embedder (deploy/bench/textvectors):
//	                         one little-endian float32 row per line of the tsv
//	model.json               {"model": name, "dims": n}, n at most 768
//
// Rows shorter than 768 are padded with zeros, which leaves every cosine
// distance as the model made it.

// writeTexts writes clips.tsv and queries.tsv for o.clips clips and
// o.queries queries: the document text the worker would embed for each
// clip loadCatalog generates (same generator, same seed), and customer-like
// descriptions as queries.
func writeTexts(dir string, o options) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rng := newClipRNG(o.seed)
	err := writeLines(filepath.Join(dir, "clips.tsv"), o.clips, func(i int) string {
		c := benchkit.RandomClip(rng, i)
		return catalog.DocumentText(c.Title, c.Description, c.Tags, c.Emotion, c.Gender, c.AgeRange,
			c.Location, "video", c.Orientation)
	})
	if err != nil {
		return err
	}
	qrng := rand.New(rand.NewPCG(o.seed, 5))
	return writeLines(filepath.Join(dir, "queries.tsv"), o.queries, func(int) string {
		return embed.NormalizeQuery(benchkit.SemanticQuery(qrng))
	})
}

func writeLines(path string, n int, line func(i int) string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, "%d\t%s\n", i, line(i))
	}
	if err := w.Flush(); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// readVectors reads the rows of a text-vectors file (name: clips or
// queries), at least n of them, each padded to embed.Dimensions and of
// unit length.
func readVectors(dir, name string, n int) ([][]float32, error) {
	var meta struct {
		Model string `json:"model"`
		Dims  int    `json:"dims"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return nil, fmt.Errorf("model.json: %w", err)
	}
	if meta.Dims < 1 || meta.Dims > embed.Dimensions {
		return nil, fmt.Errorf("model.json: dims %d is not from 1 to %d", meta.Dims, embed.Dimensions)
	}
	raw, err := os.ReadFile(filepath.Join(dir, name+".f32"))
	if err != nil {
		return nil, err
	}
	rows := len(raw) / (4 * meta.Dims)
	if rows < n {
		return nil, fmt.Errorf("%s.f32 has %d rows of %d dimensions; %d are needed", name, rows, meta.Dims, n)
	}
	out := make([][]float32, n)
	for i := range out {
		v := make([]float32, embed.Dimensions)
		for j := range meta.Dims {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i*meta.Dims+j):]))
		}
		out[i] = unit(v)
	}
	return out, nil
}
