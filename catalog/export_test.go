package catalog

import "github.com/google/uuid"

// CachedVideo reports whether this node holds a copy of clip id read at
// version, however old (the external tests check the cache without
// reaching inside). It asks which writes make a copy stale, not how long a
// copy lives, so its answer does not depend on how long the test took.
func (s *Service) CachedVideo(id uuid.UUID, version uint32) bool {
	s.videos.mu.RLock()
	defer s.videos.mu.RUnlock()
	e, ok := s.videos.m[id]
	return ok && e.version == version
}
