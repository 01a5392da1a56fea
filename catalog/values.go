package catalog

// The values of a clip's fields that the import checks (package
// catalog/imports) and the searches filter on (package catalog/search).

// VideoModel is the creator filmed in a video.
type VideoModel struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// The allowed values of the clip enums, in the order api/openapi.json lists them.
// Functions rather than variables so no caller can change them.

// Emotions lists the emotion values.
func Emotions() []string {
	return []string{"neutral", "happy", "playful", "confident", "surprised", "confused",
		"shocked", "laughing", "curious", "amazed", "excited", "sad", "angry"}
}

// Genders lists the gender values.
func Genders() []string { return []string{"female", "male", "non_binary"} }

// AgeRanges lists the age range values.
func AgeRanges() []string { return []string{"18-24", "25-34", "35-44", "45-54", "55+"} }

// MediaTypes lists the media type values; "video" is the default.
func MediaTypes() []string { return []string{"video", "image"} }

// Orientations lists the orientation values.
func Orientations() []string { return []string{"vertical", "horizontal", "square"} }

// Limits on the free-text fields that are also search filters: an imported
// clip's location and model id, and the filters of the same names.
const (
	MaxLocationChars = 100
	MaxModelIDChars  = 100
)
