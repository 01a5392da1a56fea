package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// configGuide holds the Configuration table operators read.
const configGuide = "../../docs/operations.md"

// TestEverySettingIsDocumented: every variable Load reads has a row in the
// Configuration table, and every row names a variable Load reads, so a new
// setting without its documentation, or a row left behind by a removed one,
// fails here.
func TestEverySettingIsDocumented(t *testing.T) {
	var read []string
	base := env(nil)
	if _, err := Load(func(name string) string {
		if !slices.Contains(read, name) {
			read = append(read, name)
		}
		return base(name)
	}); err != nil {
		t.Fatal(err)
	}

	raw, err := os.ReadFile(configGuide)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "\n## Configuration\n")
	if !ok {
		t.Fatalf("%s has no Configuration section", configGuide)
	}
	if end := strings.Index(table, "\n## "); end >= 0 {
		table = table[:end]
	}
	name := regexp.MustCompile("`([A-Z][A-Z0-9_]+)`")
	var rows []string
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			rows = append(rows, m[1])
		}
	}
	if len(rows) == 0 {
		t.Fatalf("no rows in the Configuration table of %s", configGuide)
	}
	for _, n := range read {
		if !slices.Contains(rows, n) {
			t.Errorf("%s is read by Load but has no row in the Configuration table of %s", n, configGuide)
		}
	}
	for _, n := range rows {
		if !slices.Contains(read, n) {
			t.Errorf("the Configuration table of %s documents %s, which Load does not read", configGuide, n)
		}
	}
}
