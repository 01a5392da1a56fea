package search

// ParseEmotion reads an emotion filter exactly as a catalog search does
// (trimmed, any case, one of Emotions, the same 400 otherwise), for the
// other listings that filter by emotion. Empty means no filter.
func ParseEmotion(s string) (string, error) {
	q := Query{Emotion: s}
	if err := q.Validate(); err != nil {
		return "", err
	}
	return q.Emotion, nil
}
