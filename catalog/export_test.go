package catalog

import (
	"time"

	"github.com/google/uuid"
)

// CachedVideo reports whether this node holds a copy of clip id read at
// version (the external tests check the cache without reaching inside).
func (s *Service) CachedVideo(id uuid.UUID, version uint32, now time.Time) bool {
	_, ok := s.videos.get(id, version, now)
	return ok
}
