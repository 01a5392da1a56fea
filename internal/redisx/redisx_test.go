package redisx

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url     string
		wantErr string
		check   func(t *testing.T, tg Target)
	}{
		{url: "redis://127.0.0.1:6379/3", check: func(t *testing.T, tg Target) {
			if tg.Sentinel() || tg.single.DB != 3 {
				t.Fatalf("got %+v", tg)
			}
		}},
		{url: "redis-sentinel://:s3cret@s1:26379,s2:26380,10.0.0.3:26381/2?master=broll", check: func(t *testing.T, tg Target) {
			fo := tg.FailoverOptions()
			if !tg.Sentinel() || fo.MasterName != "broll" || fo.DB != 2 || fo.Password != "s3cret" || fo.SentinelPassword != "s3cret" ||
				strings.Join(fo.SentinelAddrs, " ") != "s1:26379 s2:26380 10.0.0.3:26381" {
				t.Fatalf("got %+v", fo)
			}
		}},
		{url: "redis-sentinel://s1:26379?master=broll", check: func(t *testing.T, tg Target) {
			if fo := tg.FailoverOptions(); fo.DB != 0 || fo.Password != "" || len(fo.SentinelAddrs) != 1 {
				t.Fatalf("got %+v", fo)
			}
		}},
		{url: "redis-sentinel://s1:26379,s2:26379/0", wantErr: "?master=NAME"},
		{url: "redis-sentinel://s1:26379/0?master=a&db=2", wantErr: `unknown parameter "db"`},
		{url: "redis-sentinel://s1,s2:26379/0?master=a", wantErr: `"s1" is not host:port`},
		{url: "redis-sentinel://s1:0/0?master=a", wantErr: "no valid port"},
		{url: "redis-sentinel://s1:26379/x?master=a", wantErr: `database "x"`},
		{url: "redis-sentinel://:pw@s1:26379/0?master=a&x=%zz", wantErr: "query"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			tg, err := Parse(tc.url)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "pw") {
					t.Fatalf("error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, tg)
		})
	}
}
