package deploy

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
)

// TestComposeS3Profile: with `--profile s3` and BROLL_MEDIA_STORE=s3 the
// file adds MinIO and its bucket, and every role's configuration loads on
// the s3 store pointing at that service.
func TestComposeS3Profile(t *testing.T) {
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"},
		cli.WithWorkingDirectory(".."), cli.WithName("broll"), cli.WithProfiles([]string{"s3"}),
		cli.WithEnv([]string{"BROLL_SIGNING_KEY=" + signingKey, "BROLL_MEDIA_STORE=s3"}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := opts.LoadProject(ctx)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load with the s3 profile: %v", err)
	}
	for _, name := range []string{"minio", "minio-init"} {
		if _, ok := p.Services[name]; !ok {
			t.Fatalf("no %s service with the s3 profile", name)
		}
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
		u, _ := url.Parse(cfg.S3.Endpoint)
		if cfg.MediaStore != "s3" || p.Services[u.Hostname()].Name == "" {
			t.Fatalf("%s: store %s at %s, which is no service", name, cfg.MediaStore, cfg.S3.Endpoint)
		}
	}
}
