package webhook_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// standardWebhooksNPM is the pinned npm package receivers in JavaScript use.
const standardWebhooksNPM = "standardwebhooks@1.1.1"

// verifyWithNode checks msgs with the npm Standard Webhooks library, run
// by node, against every secret. npm and node are required, not optional.
func verifyWithNode(t *testing.T, secrets []string, msgs []message) {
	t.Helper()
	dir := t.TempDir()
	install := exec.Command("npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", dir, standardWebhooksNPM)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm install %s: %v\n%s", standardWebhooksNPM, err, out)
	}
	script, err := os.ReadFile("testdata/verify.cjs")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "verify.cjs"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	type nodeMsg struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	in := struct {
		Secrets  []string  `json:"secrets"`
		Messages []nodeMsg `json:"messages"`
	}{Secrets: secrets}
	for _, m := range msgs {
		h := map[string]string{}
		for k := range m.Header {
			h[strings.ToLower(k)] = m.Header.Get(k)
		}
		in.Messages = append(in.Messages, nodeMsg{Headers: h, Body: string(m.Body)})
	}
	stdin, _ := json.Marshal(in)
	cmd := exec.Command("node", "verify.cjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node verification failed: %v\n%s", err, out)
	}
	var res struct{ Verified int }
	if err := json.Unmarshal(out, &res); err != nil || res.Verified != len(msgs)*len(secrets) {
		t.Fatalf("node verified %s, want %d", out, len(msgs)*len(secrets))
	}
}
