// Package ollamatest runs a real Ollama server in tests: `ollama serve`
// built from the Go module go.mod pins (deploy/local/stack.sh builds it
// into .stack/bin and names it in .stack/env as BROLL_TEST_OLLAMA), on a
// free port, with its models in a folder of the test's own, and a small
// embedding model of nomic-embed-text's architecture that the test writes
// itself (WriteModel). The embed package's fast unit tests use the
// simulated server of embed/embedtest instead.
package ollamatest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"broll/internal/freeport"

	"github.com/ollama/ollama/api"
)

// Options configure a server. Zero values take defaults.
type Options struct {
	// NumParallel is OLLAMA_NUM_PARALLEL: requests one loaded model
	// serves at once; the others wait for it (the server's queue,
	// OLLAMA_MAX_QUEUE, holds only requests for a model being loaded).
	// 1 if zero.
	NumParallel int
	// Env is added to the server's environment (OLLAMA_* settings).
	Env map[string]string
}

// Server is a running `ollama serve`. Its methods are safe for concurrent
// use.
type Server struct {
	// URL is the server's base URL, as OLLAMA_HOST takes it.
	URL string

	t      testing.TB
	bin    string
	env    []string
	port   int
	client *api.Client

	mu  sync.Mutex
	cmd *exec.Cmd
	log *bytes.Buffer
}

// Binary finds the ollama program: BROLL_TEST_OLLAMA (written to
// .stack/env by deploy/local/stack.sh up, which builds it), else the PATH.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("BROLL_TEST_OLLAMA"); p != "" {
		return p
	}
	if p, err := exec.LookPath("ollama"); err == nil {
		return p
	}
	t.Fatal("ollama not found: run `bash deploy/local/stack.sh up` (it builds it) and load .stack/env")
	return ""
}

// Start runs `ollama serve` on a free port with an empty model folder and
// stops it when the test ends. The server has no model yet: see Create.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.NumParallel <= 0 {
		opts.NumParallel = 1
	}
	home := t.TempDir()
	port := freeport.Must(t)
	env := map[string]string{
		"PATH":                "/usr/bin:/bin",
		"HOME":                home,
		"OLLAMA_HOST":         "127.0.0.1:" + strconv.Itoa(port),
		"OLLAMA_MODELS":       filepath.Join(home, "models"),
		"OLLAMA_NUM_PARALLEL": strconv.Itoa(opts.NumParallel),
		// One model at a time, kept loaded for the whole test.
		"OLLAMA_MAX_LOADED_MODELS": "1",
		"OLLAMA_KEEP_ALIVE":        "1h",
		"OLLAMA_NOPRUNE":           "1",
	}
	for k, v := range opts.Env {
		env[k] = v
	}
	s := &Server{
		URL:  "http://127.0.0.1:" + strconv.Itoa(port),
		t:    t,
		bin:  Binary(t),
		port: port,
	}
	for k, v := range env {
		s.env = append(s.env, k+"="+v)
	}
	u, _ := url.Parse(s.URL)
	s.client = api.NewClient(u, &http.Client{})
	t.Cleanup(s.Kill)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ollama log tail:\n%s", s.LogTail(4000))
		}
	})
	s.Restart()
	return s
}

// Restart starts the server again after Kill, on the same port and model
// folder: the models created before are there.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		s.t.Fatal("ollamatest: Restart while the server runs")
	}
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = s.env
	// Its own process group: the model runners it starts are its
	// children, and Kill takes them down with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log bytes.Buffer
	cmd.Stdout = &lockedWriter{mu: &s.mu, w: &log}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		s.mu.Unlock()
		s.t.Fatalf("start ollama: %v", err)
	}
	s.cmd, s.log = cmd, &log
	s.mu.Unlock()

	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := s.client.Version(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("ollama did not answer within 30s: %v\n%s", err, s.LogTail(2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Kill ends the server and its model runners at once (SIGKILL to the
// process group), as a crash or an OOM kill would.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd := s.cmd
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
}

// LogTail returns up to the last n bytes the server printed since it was
// last started.
func (s *Server) LogTail(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil {
		return ""
	}
	b := s.log.Bytes()
	return string(b[max(0, len(b)-n):])
}

// Client is an Ollama API client of the server.
func (s *Server) Client() *api.Client { return s.client }

// Create writes a model (WriteModel with spec), uploads it as a blob and
// creates it under name through the server's API, as `ollama create`
// does; then it loads it with one embed request, so that a test's first
// request does not pay for the load.
func (s *Server) Create(t testing.TB, name string, spec ModelSpec) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := WriteModel(path, spec); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	digest := fmt.Sprintf("sha256:%x", sha256.Sum256(raw))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := s.client.CreateBlob(ctx, digest, bytes.NewReader(raw)); err != nil {
		t.Fatalf("upload the model blob: %v", err)
	}
	stream := false
	if err := s.client.Create(ctx, &api.CreateRequest{
		Model:  name,
		Files:  map[string]string{"model.gguf": digest},
		Stream: &stream,
	}, func(api.ProgressResponse) error { return nil }); err != nil {
		t.Fatalf("create model %s: %v\n%s", name, err, s.LogTail(2000))
	}
	if _, err := s.client.Embed(ctx, &api.EmbedRequest{Model: name, Input: "load"}); err != nil {
		t.Fatalf("load model %s: %v\n%s", name, err, s.LogTail(4000))
	}
}

// lockedWriter appends to a buffer under the server's lock.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
