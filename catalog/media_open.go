package catalog

import (
	"context"
	"fmt"

	"broll/internal/config"
)

// OpenMediaStore opens the store BROLL_MEDIA_STORE names, as every binary
// does: the local directory or the S3 bucket.
func OpenMediaStore(ctx context.Context, cfg config.Config) (MediaStore, error) {
	if cfg.MediaStore == "s3" {
		m, err := NewS3Media(ctx, S3Options{
			Endpoint: cfg.S3.Endpoint, Bucket: cfg.S3.Bucket, Region: cfg.S3.Region,
			AccessKey: cfg.S3.AccessKey.Reveal(), SecretKey: cfg.S3.SecretKey.Reveal(),
			PathStyle: cfg.S3.PathStyle, PresignTTL: cfg.S3.PresignTTL, PublicEndpoint: cfg.S3.PublicEndpoint,
		})
		if err != nil {
			return nil, fmt.Errorf("BROLL_S3_*: %w", err)
		}
		return m, nil
	}
	m, err := NewLocalMedia(cfg.MediaDir)
	if err != nil {
		return nil, fmt.Errorf("BROLL_MEDIA_DIR: %w", err)
	}
	return m, nil
}
