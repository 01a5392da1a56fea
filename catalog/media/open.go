package media

import (
	"context"
	"fmt"

	"broll/internal/config"
)

// Open opens the store BROLL_MEDIA_STORE names, as every binary
// does: the local directory or the S3 bucket.
func Open(ctx context.Context, cfg config.Config) (Store, error) {
	if cfg.MediaStore == "s3" {
		m, err := NewS3(ctx, S3Options{
			Endpoint: cfg.S3.Endpoint, Bucket: cfg.S3.Bucket, Region: cfg.S3.Region,
			AccessKey: cfg.S3.AccessKey.Reveal(), SecretKey: cfg.S3.SecretKey.Reveal(),
			PathStyle: cfg.S3.PathStyle, PresignTTL: cfg.S3.PresignTTL, PublicEndpoint: cfg.S3.PublicEndpoint,
		})
		if err != nil {
			return nil, fmt.Errorf("BROLL_S3_*: %w", err)
		}
		return m, nil
	}
	m, err := NewLocal(cfg.MediaDir)
	if err != nil {
		return nil, fmt.Errorf("BROLL_MEDIA_DIR: %w", err)
	}
	return m, nil
}
