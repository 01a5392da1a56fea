package config

import (
	"slices"
	"strings"
	"testing"
)

func TestMCPAllowedOrigins(t *testing.T) {
	c, err := Load(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.MCPAllowedOrigins) != 0 {
		t.Fatalf("default origins: %v, want none", c.MCPAllowedOrigins)
	}

	c, err = Load(env(map[string]string{"BROLL_MCP_ALLOWED_ORIGINS": " https://App.Example.com/ , http://localhost:3000,,*"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://app.example.com", "http://localhost:3000", "*"}
	if !slices.Equal(c.MCPAllowedOrigins, want) {
		t.Fatalf("origins: %q, want %q", c.MCPAllowedOrigins, want)
	}

	for _, bad := range []string{"example.com", "ftp://example.com", "https://example.com/path", "https://user@example.com",
		"https://example.com?x=1", "null"} {
		_, err := Load(env(map[string]string{"BROLL_MCP_ALLOWED_ORIGINS": bad}))
		if err == nil || !strings.Contains(err.Error(), "BROLL_MCP_ALLOWED_ORIGINS") {
			t.Errorf("%q: got %v, want an error naming BROLL_MCP_ALLOWED_ORIGINS", bad, err)
		}
	}
}
