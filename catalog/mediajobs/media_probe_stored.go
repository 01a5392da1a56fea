package mediajobs

import (
	"context"
	"errors"
	"fmt"
	"io"

	"broll/catalog/media"
	"broll/internal/apperr"
	"broll/internal/mp4meta"
)

// probeStored probes the stored file under key. MP4 and QuickTime files,
// nearly every clip, are read in-process (mp4meta, over go-mp4): no
// ffprobe process per clip, and a file whose samples are not all there is
// refused, which ffprobe, reading headers only, would pass. Anything else (other
// containers, images, fragmented MP4) goes to ffprobe, and a video there is
// decoded whole by ffmpeg too, since ffprobe passes a cut Matroska or
// fragmented file.
func (s *Service) probeStored(ctx context.Context, key string) (media.Probe, error) {
	p, err := s.probeInProcess(ctx, key)
	if !errors.Is(err, mp4meta.ErrNotHandled) {
		return p, err
	}
	src, err := media.Source(ctx, s.media, key)
	if err != nil {
		return media.Probe{}, err
	}
	if p, err = media.ProbeFile(ctx, src); err != nil || p.MediaType != "video" {
		return p, err
	}
	if err := media.CheckDecodes(ctx, src); err != nil {
		return media.Probe{}, err
	}
	return p, nil
}

// probeInProcess reads key with mp4meta; mp4meta.ErrNotHandled when the
// file is not one it reads (or the store's files cannot be read at an
// offset).
func (s *Service) probeInProcess(ctx context.Context, key string) (media.Probe, error) {
	f, err := s.media.Open(ctx, key)
	if apperr.CodeOf(err) == apperr.NotFound {
		return media.Probe{}, &media.UnreadableError{Reason: "the file is not in the media store"}
	}
	if err != nil {
		return media.Probe{}, err
	}
	defer f.Close()
	ra, ok := f.(io.ReaderAt)
	if !ok {
		return media.Probe{}, mp4meta.ErrNotHandled
	}
	info, err := mp4meta.Read(ra, f.Size())
	var bad *mp4meta.CorruptError
	switch {
	case errors.As(err, &bad):
		return media.Probe{}, &media.UnreadableError{Reason: bad.Reason}
	case errors.Is(err, mp4meta.ErrNotHandled):
		return media.Probe{}, err
	case err != nil:
		return media.Probe{}, fmt.Errorf("probe %s: %w", key, err)
	}
	return media.Probe{MediaType: "video", Duration: info.Duration, FPS: info.FPS, Width: info.Width, Height: info.Height,
		Rotation: info.Rotation, TrailingBytes: info.TrailingBytes}, nil
}
