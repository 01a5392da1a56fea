package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"broll/internal/freeport"

	"github.com/redis/go-redis/v9"
)

// sentinelMaster is the name the test's sentinels know the primary by.
const sentinelMaster = "broll"

// sentinelStack is a Redis primary, one replica and three sentinels
// (quorum 2), each a redis-server process of the test's own, as a Sentinel
// deployment runs them: the service reaches them only through the
// sentinels' addresses.
type sentinelStack struct {
	t         *testing.T
	dir       string
	primary   *exec.Cmd
	primaryAt string
	replicaAt string
	sentinels []string
}

// startSentinelStack starts the five servers, the sentinels calling the
// primary down after downAfter without an answer, and returns once every
// sentinel knows the replica and the two other sentinels, so that a
// failover can be agreed on.
func startSentinelStack(t *testing.T, downAfter time.Duration) *sentinelStack {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server not installed (deploy/local/stack.sh up installs it)")
	}
	s := &sentinelStack{t: t, dir: t.TempDir()}
	pport, rport := freeport.Must(t), freeport.Must(t)
	s.primaryAt = net.JoinHostPort("127.0.0.1", strconv.Itoa(pport))
	s.replicaAt = net.JoinHostPort("127.0.0.1", strconv.Itoa(rport))
	s.primary = s.run("primary", "--port", strconv.Itoa(pport))
	s.run("replica", "--port", strconv.Itoa(rport), "--replicaof", "127.0.0.1", strconv.Itoa(pport))
	for i := range 3 {
		port := freeport.Must(t)
		conf := filepath.Join(s.dir, fmt.Sprintf("sentinel-%d.conf", i))
		// Sentinel rewrites its file (what it learnt of replicas and peers).
		body := strings.Join([]string{
			"bind 127.0.0.1",
			"port " + strconv.Itoa(port),
			"dir " + s.dir,
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2", sentinelMaster, pport),
			"sentinel down-after-milliseconds " + sentinelMaster + " " + strconv.FormatInt(downAfter.Milliseconds(), 10),
			"sentinel failover-timeout " + sentinelMaster + " 3000",
			"sentinel parallel-syncs " + sentinelMaster + " 1",
		}, "\n") + "\n"
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		s.start(fmt.Sprintf("sentinel-%d", i), "redis-server", conf, "--sentinel")
		s.sentinels = append(s.sentinels, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	eventually(t, 30*time.Second, "the sentinels know the replica and each other", func() error {
		for _, addr := range s.sentinels {
			m, err := s.sentinelMaster(addr)
			if err != nil {
				return err
			}
			if m["num-slaves"] != "1" || m["num-other-sentinels"] != "2" || m["flags"] != "master" {
				return fmt.Errorf("sentinel %s sees %v", addr, m)
			}
		}
		return s.replicaInSync()
	})
	return s
}

// run starts a data node (primary or replica) without persistence: what
// survives a failover is what the replica holds.
func (s *sentinelStack) run(name string, args ...string) *exec.Cmd {
	base := []string{"--bind", "127.0.0.1", "--dir", filepath.Join(s.dir, name), "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay", "0"}
	if err := os.MkdirAll(filepath.Join(s.dir, name), 0o700); err != nil {
		s.t.Fatal(err)
	}
	return s.start(name, "redis-server", append(base, args...)...)
}

func (s *sentinelStack) start(name, program string, args ...string) *exec.Cmd {
	s.t.Helper()
	cmd := exec.Command(program, args...)
	log, err := os.Create(filepath.Join(s.dir, name+".log"))
	if err != nil {
		s.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	s.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		log.Close()
		if s.t.Failed() {
			b, _ := os.ReadFile(log.Name())
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			s.t.Logf("%s log tail:\n%s", name, strings.Join(lines[max(0, len(lines)-15):], "\n"))
		}
	})
	return cmd
}

// URL is REDIS_URL for the service: the sentinels and the master's name.
func (s *sentinelStack) URL() string {
	return "redis-sentinel://" + strings.Join(s.sentinels, ",") + "/0?master=" + sentinelMaster
}

func (s *sentinelStack) sentinelMaster(addr string) (map[string]string, error) {
	c := redis.NewSentinelClient(&redis.Options{Addr: addr})
	defer c.Close()
	return c.Master(context.Background(), sentinelMaster).Result()
}

// masterAddr is the primary's address as every sentinel reports it; an
// error while they disagree.
func (s *sentinelStack) masterAddr() (string, error) {
	var seen string
	for _, addr := range s.sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: addr})
		hp, err := c.GetMasterAddrByName(context.Background(), sentinelMaster).Result()
		c.Close()
		if err != nil {
			return "", err
		}
		got := net.JoinHostPort(hp[0], hp[1])
		if seen != "" && got != seen {
			return "", fmt.Errorf("sentinels disagree: %s and %s", seen, got)
		}
		seen = got
	}
	return seen, nil
}

// replicaInSync is nil once the replica has every write the primary
// acknowledged so far.
func (s *sentinelStack) replicaInSync() error {
	p := redis.NewClient(&redis.Options{Addr: s.primaryAt})
	defer p.Close()
	n, err := p.Do(context.Background(), "WAIT", 1, 1000).Int()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%d replicas acknowledged", n)
	}
	return nil
}

// killPrimary ends the primary at once (SIGKILL), as a crashed host would.
func (s *sentinelStack) killPrimary() {
	_ = s.primary.Process.Signal(syscall.SIGKILL)
	_ = s.primary.Wait()
}

// gatedOllama forwards to the fake Ollama, except that while the gate is
// shut requests to embed clips wait until it opens (or their client hangs up).
type gatedOllama struct {
	URL  string
	mu   sync.Mutex
	open chan struct{} // closed while the gate is open
	seen chan struct{} // one value per embed request that found the gate shut
}

func newGatedOllama(t *testing.T, backendURL string) *gatedOllama {
	u, _ := url.Parse(backendURL)
	proxy := httputil.NewSingleHostReverseProxy(u)
	transport := &http.Transport{}
	proxy.Transport = transport
	g := &gatedOllama{open: make(chan struct{}), seen: make(chan struct{}, 1000)}
	close(g.open)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		// Only clips' texts wait: the probe every process sends at start
		// passes.
		if r.URL.Path == "/api/embed" && bytes.Contains(body, []byte("Test clip ")) {
			g.mu.Lock()
			open := g.open
			g.mu.Unlock()
			select {
			case <-open:
			default:
				g.seen <- struct{}{}
				select {
				case <-open:
				case <-r.Context().Done():
					return
				}
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	g.URL = srv.URL
	t.Cleanup(func() {
		g.openGate()
		srv.Close()
		transport.CloseIdleConnections()
	})
	return g
}

func (g *gatedOllama) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
		g.open = make(chan struct{})
	default:
	}
}

func (g *gatedOllama) openGate() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.open:
	default:
		close(g.open)
	}
}
