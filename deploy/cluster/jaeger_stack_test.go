package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"broll/internal/freeport"
	"broll/internal/testkit/headless"
)

// jaeger is a Jaeger v2 process of the test's own: in-memory storage, an
// OTLP/HTTP receiver and the query API, each on a free port. Jaeger's Go
// module carries no UI; with BROLL_JAEGER_UI naming a built jaeger-ui
// (packages/jaeger-ui/build of jaegertracing/jaeger-ui at Jaeger's
// version), the query port serves it too.
type jaeger struct {
	otlp  string // the OTLP endpoint the services export to
	query string // the base URL of the query API
}

// jaegerBinary is BROLL_TEST_JAEGER, which deploy/local/stack.sh up builds
// and writes to .stack/env.
func jaegerBinary(t *testing.T) string {
	t.Helper()
	p := os.Getenv("BROLL_TEST_JAEGER")
	if p == "" {
		t.Fatal("BROLL_TEST_JAEGER is not set: run `bash deploy/local/stack.sh up` (it builds Jaeger) and load .stack/env")
	}
	return p
}

const jaegerConfig = `
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
%s  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// startJaeger runs Jaeger until the test ends and waits for its query API.
func startJaeger(t *testing.T) *jaeger {
	t.Helper()
	dir := t.TempDir()
	queryPort, grpcPort, otlpPort := freeport.Must(t), freeport.Must(t), freeport.Must(t)
	cfg := filepath.Join(dir, "jaeger.yaml")
	ui := ""
	if assets := os.Getenv("BROLL_JAEGER_UI"); assets != "" {
		ui = fmt.Sprintf("    ui:\n      assets_path: %q\n", assets)
	}
	if err := os.WriteFile(cfg, fmt.Appendf(nil, jaegerConfig, queryPort, grpcPort, ui, otlpPort), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "jaeger.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(jaegerBinary(t), "--config", "file:"+cfg)
	// Jaeger traces itself to a local collector unless told not to.
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "OTEL_TRACES_EXPORTER=none"}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("start jaeger: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		_ = logFile.Close()
		if t.Failed() {
			raw, _ := os.ReadFile(logFile.Name())
			t.Logf("jaeger log:\n%s", raw)
		}
	})
	j := &jaeger{otlp: fmt.Sprintf("http://127.0.0.1:%d", otlpPort), query: fmt.Sprintf("http://127.0.0.1:%d", queryPort)}
	eventually(t, 30*time.Second, "jaeger's query API", func() error {
		res, err := client.Get(j.query + "/api/services")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	})
	return j
}

// env is what points a process at j: every trace sampled, spans exported
// a tenth of a second after they end.
func (j *jaeger) env() map[string]string {
	return map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": j.otlp,
		"OTEL_TRACES_SAMPLER":         "always_on",
		"OTEL_BSP_SCHEDULE_DELAY":     "100",
	}
}

// jaegerSpan is one span of a trace as the query API returns it.
type jaegerSpan struct {
	Name    string
	Service string
	Tags    map[string]any
}

// trace returns the spans Jaeger holds of trace id (none while it has
// none), with an error for any answer but those.
func (j *jaeger) trace(id string) ([]jaegerSpan, error) {
	res, err := client.Get(j.query + "/api/traces/" + id)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /api/traces/%s: status %d", id, res.StatusCode)
	}
	var body struct {
		Data []struct {
			TraceID string `json:"traceID"`
			Spans   []struct {
				TraceID       string `json:"traceID"`
				OperationName string `json:"operationName"`
				ProcessID     string `json:"processID"`
				Tags          []struct {
					Key   string `json:"key"`
					Value any    `json:"value"`
				} `json:"tags"`
			} `json:"spans"`
			Processes map[string]struct {
				ServiceName string `json:"serviceName"`
			} `json:"processes"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		return nil, err
	}
	var spans []jaegerSpan
	for _, tr := range body.Data {
		for _, s := range tr.Spans {
			if s.TraceID != id {
				return nil, fmt.Errorf("trace %s holds a span of trace %s", id, s.TraceID)
			}
			tags := map[string]any{}
			for _, tag := range s.Tags {
				tags[tag.Key] = tag.Value
			}
			spans = append(spans, jaegerSpan{Name: s.OperationName, Service: tr.Processes[s.ProcessID].ServiceName, Tags: tags})
		}
	}
	return spans, nil
}

// wantSpan is a span a trace must hold: its service, its name and the tags
// it must carry.
type wantSpan struct {
	service, name string
	tags          map[string]any
}

func (w wantSpan) String() string {
	return fmt.Sprintf("%s %q %v", w.service, w.name, w.tags)
}

func (w wantSpan) matches(s jaegerSpan) bool {
	if s.Service != w.service || (w.name != "" && s.Name != w.name) {
		return false
	}
	for k, v := range w.tags {
		if fmt.Sprint(s.Tags[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

// missing lists the spans of want that spans lack.
func missing(spans []jaegerSpan, want []wantSpan) []string {
	var out []string
	for _, w := range want {
		if !slices.ContainsFunc(spans, w.matches) {
			out = append(out, w.String())
		}
	}
	return out
}

// spanNames lists the spans for a failure message.
func spanNames(spans []jaegerSpan) string {
	names := make([]string, len(spans))
	for i, s := range spans {
		names[i] = s.Service + " " + s.Name
	}
	slices.Sort(names)
	return strings.Join(names, "\n")
}

// photographTrace opens trace id in Jaeger's UI in headless Chromium, waits
// until every span named in names shows, and writes the page to
// docs/file: the picture docs/operations.md shows. It needs the UI
// (BROLL_JAEGER_UI) and Chromium (`make chromium`).
func photographTrace(t *testing.T, j *jaeger, id, file string, names []string) {
	t.Helper()
	chromium := headless.Find()
	if chromium == "" {
		t.Fatal("no Chromium on this machine: `make chromium` installs it")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tab, closeTab := headless.NewTab(ctx, chromium)
	defer closeTab()
	actions := []chromedp.Action[chromedp.Void]{chromedp.Navigate(j.query + "/trace/" + id)}
	for _, name := range names {
		actions = append(actions, chromedp.WaitVisible(chromedp.Search(
			fmt.Sprintf(`//*[contains(@class, "span-name")]//*[text()=%q]`, name))))
	}
	if err := chromedp.Do(tab, actions...); err != nil {
		t.Fatalf("trace %s in Jaeger's UI: %v", id, err)
	}
	shots := headless.NewShots(t, "jaeger-")
	shots.Take(t, tab, "trace")
	shots.ToDocs(t, map[string]string{"trace": file})
}
