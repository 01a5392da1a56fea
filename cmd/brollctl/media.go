package main

import (
	"context"

	"broll/catalog/media"
	"broll/internal/apperr"
	"broll/wiring"
)

// mediaMigrate copies the local media store (BROLL_MEDIA_DIR) into the S3
// bucket of the BROLL_S3_* settings, whatever BROLL_MEDIA_STORE says, so
// it can run before the switch. Run again, it resumes.
func (c *cli) mediaMigrate(f *flags) action {
	to := f.String("to", "", "target store: s3")
	return func(ctx context.Context) (any, error) {
		if *to != "s3" {
			return nil, apperr.InvalidField("to", "--to must be s3")
		}
		cfg, err := c.config()
		if err != nil {
			return nil, err
		}
		from, err := media.NewLocal(cfg.MediaDir)
		if err != nil {
			return nil, err
		}
		cfg.MediaStore = "s3"
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		dst, err := wiring.OpenMedia(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return media.Migrate(ctx, from, dst, c.progress("media migrate", "files"))
	}
}
