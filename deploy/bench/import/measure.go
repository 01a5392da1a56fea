package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// stages are when each stage had done every clip, from the import's start.
type stages struct {
	probed, embedded, searchable time.Duration
	failed                       int
}

// watch polls the catalog every second until every clip is searchable (or
// failed its probe), printing progress every 30 s.
func watch(ctx context.Context, pool *pgxpool.Pool, n int, start time.Time, timeout time.Duration) (stages, error) {
	var st stages
	lastPrint := time.Now()
	for {
		var probed, embedded, searchable, failed int
		err := pool.QueryRow(ctx, `
			SELECT count(*) FILTER (WHERE media_status <> 'pending'),
			       count(*) FILTER (WHERE embedding_status = 'ready'),
			       count(*) FILTER (WHERE retired_at IS NULL AND embedding_status = 'ready'),
			       count(*) FILTER (WHERE media_status = 'failed')
			FROM videos`).Scan(&probed, &embedded, &searchable, &failed)
		if err != nil {
			return st, err
		}
		now := time.Since(start)
		if st.probed == 0 && probed >= n {
			st.probed = now
		}
		if st.embedded == 0 && embedded >= n-failed {
			st.embedded = now
		}
		if searchable+failed >= n {
			st.searchable, st.failed = now, failed
			if st.embedded == 0 {
				st.embedded = now
			}
			return st, nil
		}
		if time.Since(lastPrint) >= 30*time.Second {
			fmt.Printf("  %s: probed %d, embedded %d, searchable %d, failed %d\n", now.Round(time.Second), probed, embedded, searchable, failed)
			lastPrint = time.Now()
		}
		if now > timeout {
			return st, fmt.Errorf("not searchable after %s: probed %d, embedded %d, searchable %d of %d", timeout, probed, embedded, searchable, n)
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("stopped after %s: probed %d, embedded %d, searchable %d of %d", now.Round(time.Second), probed, embedded, searchable, n)
		case <-time.After(time.Second):
		}
	}
}

// client speaks to the API node.
type client struct{ base string }

type videoList struct {
	Videos []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"videos"`
}

func (c client) do(method, path, key string, body any) ([]byte, int, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, 0, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return b, res.StatusCode, err
}

// search returns how many clips a keyword search for word lists.
func (c client) search(key, word string) (int, error) {
	b, status, err := c.do("GET", "/api/v1/broll?limit=5&search="+url.QueryEscape(word), key, nil)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("search: %d %s", status, b)
	}
	var l videoList
	if err := json.Unmarshal(b, &l); err != nil {
		return 0, err
	}
	return len(l.Videos), nil
}

// findsLast checks through the API that the import's last clip is found.
func (c client) findsLast(key string, n int) error {
	got, err := c.search(key, fmt.Sprintf("benchclip%d", n-1))
	if err != nil {
		return err
	}
	if got != 1 {
		return fmt.Errorf("a search for the last imported clip lists %d clips, want 1", got)
	}
	return nil
}

// lonePost posts one clip through the ops API and returns how long it took
// until a keyword search lists it.
func (c client) lonePost(opsKey, key string, f clipFiles, previews bool) (time.Duration, error) {
	word := fmt.Sprintf("lonezebra%d", time.Now().UnixNano())
	line := map[string]any{"title": "Zebra crossing " + word, "emotion": "happy", "gender": "female",
		"difficulty": "easy", "media_file": f.full}
	if previews {
		line["preview_file"], line["thumbnail_file"] = f.preview, f.thumb
	}
	start := time.Now()
	b, status, err := c.do("POST", "/api/ops/v1/videos", opsKey, []any{line})
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("POST /api/ops/v1/videos: %d %s", status, b)
	}
	deadline := start.Add(time.Minute)
	for {
		n, err := c.search(key, word)
		if err != nil {
			return 0, err
		}
		if n == 1 {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("the posted clip is not searchable after a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
