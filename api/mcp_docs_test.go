package api

import (
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"broll/tenancy"
)

// TestMCPToolsDocumented: the tool table of docs/mcp.md lists every tool
// the server registers, with the scope it needs, and no tool that is not
// there, so that a tool added to the code cannot go unannounced.
func TestMCPToolsDocumented(t *testing.T) {
	t.Parallel()
	ts := &toolSet{mcp: mcp.NewServer(&mcp.Implementation{Name: "broll"}, nil), scopes: map[string]tenancy.Scope{}}
	(&mcpTools{}).addMCPTools(ts)
	if len(ts.scopes) == 0 {
		t.Fatal("no tools registered")
	}
	doc, err := os.ReadFile("../docs/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]string{}
	for line := range strings.Lines(string(doc)) {
		cells := strings.Split(strings.TrimSpace(line), "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name, scope := strings.Trim(strings.TrimSpace(cells[1]), "`"), strings.Trim(strings.TrimSpace(cells[2]), "`")
		if strings.HasPrefix(scope, "broll:") {
			documented[name] = scope
		}
	}
	for name, scope := range ts.scopes {
		if got, ok := documented[name]; !ok {
			t.Errorf("docs/mcp.md has no row for the tool %s (scope %s)", name, scope)
		} else if got != string(scope) {
			t.Errorf("docs/mcp.md gives %s the scope %s, the server %s", name, got, scope)
		}
	}
	for name := range documented {
		if _, ok := ts.scopes[name]; !ok {
			t.Errorf("docs/mcp.md lists %s, which the server does not have", name)
		}
	}
}
