// Package mediacorpus makes, with ffmpeg at test time, the corpus of media
// files the probe is checked against: the containers, codecs, display
// turns, layouts and damage clips come in with. The probe's tests compare
// their verdict with ffmpeg's full decode of each file, and the
// in-process reader's fuzz target starts from the same files.
//
// Files are small (64x36 and the like, 1 s, 10 fps) and cached by the hash
// of how each is made and of ffmpeg's version, under the user's cache
// directory, so a second run reads them back instead of encoding again.
package mediacorpus

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// File is one file of the corpus.
type File struct {
	// Name says what the file is, and is unique in the corpus.
	Name string
	// Ext is the file's extension, with its dot, as it would be stored.
	Ext   string
	Bytes []byte
	// Stricter, when set, is why the probe refuses this file on purpose
	// although ffmpeg may play it (a movie box cut short: the reader
	// cannot vouch for a file whose index is not all there).
	Stricter string
}

// spec says how a file is made: by ffmpeg from its test sources (args),
// by ffmpeg from another file of the corpus (from and args: a remux), or
// from another file's bytes (from and derive).
type spec struct {
	name, ext string
	args      []string
	from      string
	derive    func([]byte) []byte
	// deriveKey names derive for the cache (two derives differ in it).
	deriveKey string
	stricter  string
}

// generator makes the files of specs, each once, at most GOMAXPROCS
// ffmpeg processes at a time.
type generator struct {
	tb      testing.TB
	specs   map[string]spec
	version string
	cache   string
	slots   chan struct{}
	mu      sync.Mutex
	made    map[string]*made
}

type made struct {
	once sync.Once
	b    []byte
	err  error
}

// Files makes (or reads back from the cache) every file of the corpus.
// ffmpeg is installed by deploy/local/stack.sh: without it the test
// fails.
func Files(tb testing.TB) []File {
	tb.Helper()
	out, err := exec.Command("ffmpeg", "-version").Output()
	if err != nil {
		tb.Fatalf("ffmpeg (installed by deploy/local/stack.sh): %v", err)
	}
	version, _, _ := strings.Cut(string(out), "\n")
	g := &generator{tb: tb, specs: map[string]spec{}, version: version, cache: cacheDir(tb),
		slots: make(chan struct{}, runtime.GOMAXPROCS(0)), made: map[string]*made{}}
	list := specs()
	for _, s := range list {
		if _, dup := g.specs[s.name]; dup {
			tb.Fatalf("mediacorpus: two files named %s", s.name)
		}
		g.specs[s.name] = s
	}
	files := make([]File, len(list))
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, s := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := g.file(s.name)
			files[i], errs[i] = File{Name: s.name, Ext: s.ext, Bytes: b, Stricter: s.stricter}, err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			tb.Fatalf("mediacorpus: %s: %v", list[i].name, err)
		}
	}
	return files
}

// cacheDir is where made files are kept between runs: the user's cache
// directory, or a temporary one for this test when there is none.
func cacheDir(tb testing.TB) string {
	if dir, err := os.UserCacheDir(); err == nil {
		dir = filepath.Join(dir, "broll", "mediacorpus")
		if os.MkdirAll(dir, 0o755) == nil {
			return dir
		}
	}
	return tb.TempDir()
}

// file makes the named file once, its sources first.
func (g *generator) file(name string) ([]byte, error) {
	s, ok := g.specs[name]
	if !ok {
		return nil, fmt.Errorf("no file named %s", name)
	}
	g.mu.Lock()
	m := g.made[name]
	if m == nil {
		m = &made{}
		g.made[name] = m
	}
	g.mu.Unlock()
	m.once.Do(func() { m.b, m.err = g.make(s) })
	return m.b, m.err
}

// key is the hash of how s is made, its sources' included.
func (g *generator) key(s spec) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%q\x00%s\x00", g.version, s.ext, s.args, s.deriveKey)
	if s.from != "" {
		fmt.Fprintf(h, "from %s", g.key(g.specs[s.from]))
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func (g *generator) make(s spec) ([]byte, error) {
	cached := filepath.Join(g.cache, g.key(s)+s.ext)
	if b, err := os.ReadFile(cached); err == nil {
		return b, nil
	}
	var src []byte
	if s.from != "" {
		var err error
		if src, err = g.file(s.from); err != nil {
			return nil, err
		}
	}
	var b []byte
	if s.derive != nil {
		b = s.derive(bytes.Clone(src))
	} else {
		var err error
		if b, err = g.ffmpeg(s, src); err != nil {
			return nil, err
		}
	}
	// Written under a temporary name and renamed: a concurrent run of
	// another package reads either nothing or the whole file.
	tmp, err := os.CreateTemp(g.cache, "tmp-*"+s.ext)
	if err == nil {
		_, err = tmp.Write(b)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), cached)
		}
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}
	return b, nil
}

// ffmpeg runs ffmpeg for s (with src as its input when s is a remux).
func (g *generator) ffmpeg(s spec, src []byte) ([]byte, error) {
	g.slots <- struct{}{}
	defer func() { <-g.slots }()
	dir, err := os.MkdirTemp("", "mediacorpus-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	args := []string{"-v", "error", "-y"}
	if s.from != "" {
		in := filepath.Join(dir, "in"+g.specs[s.from].ext)
		if err := os.WriteFile(in, src, 0o644); err != nil {
			return nil, err
		}
		args = append(args, "-i", in)
	}
	out := filepath.Join(dir, "out"+s.ext)
	args = append(append(args, s.args...), out)
	if b, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("ffmpeg %s: %w: %s", strings.Join(s.args, " "), err, b)
	}
	return os.ReadFile(out)
}
