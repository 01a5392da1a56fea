package deploy

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"broll/internal/redisx"
)

// composeSentinelURL is what docs/deploy.md has operators set with the
// sentinel profile.
const composeSentinelURL = "redis-sentinel://sentinel-1:26379,sentinel-2:26379,sentinel-3:26379/0?master=broll"

// TestComposeSentinelProfile: with `--profile sentinel` and BROLL_REDIS_URL
// naming the sentinels, the file adds a replica of redis and three
// sentinels (quorum 2) watching it under the URL's master name, and every
// role's configuration loads on that URL, each sentinel a service.
func TestComposeSentinelProfile(t *testing.T) {
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"},
		cli.WithWorkingDirectory(".."), cli.WithName("broll"), cli.WithProfiles([]string{"sentinel"}),
		cli.WithEnv([]string{"BROLL_SIGNING_KEY=" + signingKey, "BROLL_REDIS_URL=" + composeSentinelURL}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := opts.LoadProject(ctx)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load with the sentinel profile: %v", err)
	}
	replica, ok := p.Services["redis-replica"]
	if !ok {
		t.Fatal("no redis-replica service with the sentinel profile")
	}
	if !slices.Equal(replica.Command[len(replica.Command)-3:], []string{"--replicaof", "redis", "6379"}) {
		t.Errorf("redis-replica runs %v, want it to replicate redis:6379", replica.Command)
	}
	target, err := redisx.Parse(composeSentinelURL)
	if err != nil {
		t.Fatal(err)
	}
	fo := target.FailoverOptions()
	for _, addr := range fo.SentinelAddrs {
		host, port, _ := net.SplitHostPort(addr)
		s, ok := p.Services[host]
		if !ok {
			t.Errorf("the URL names sentinel %s, which is no service", host)
			continue
		}
		conf := strings.Join(s.Command, " ")
		for _, want := range []string{"port " + port, "sentinel monitor " + fo.MasterName + " redis 6379 2", "--sentinel"} {
			if !strings.Contains(conf, want) {
				t.Errorf("%s does not say %q: %s", host, want, conf)
			}
		}
		if s.HealthCheck == nil || len(s.HealthCheck.Test) < 2 {
			t.Errorf("%s has no healthcheck", host)
		}
		if s.Restart != types.RestartPolicyUnlessStopped {
			t.Errorf("%s restart %q", host, s.Restart)
		}
	}
	if len(fo.SentinelAddrs) != 3 {
		t.Errorf("%d sentinels in the URL, want 3 (quorum 2)", len(fo.SentinelAddrs))
	}
	for _, name := range []string{"migrate", "api", "worker"} {
		env := map[string]string{}
		for k, v := range p.Services[name].Environment {
			if v != nil {
				env[k] = *v
			}
		}
		cfg, err := loadConfig(env)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.RedisURL != composeSentinelURL {
			t.Errorf("%s: REDIS_URL %q, want the sentinels'", name, cfg.RedisURL)
		}
	}
}
