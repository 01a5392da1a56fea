package imports

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/media"
	"broll/internal/apperr"
	"broll/internal/money"
)

// VideoInput is one video as content ops describe it: a line of a `brollctl
// clips import` file or an element of the ops endpoint's JSON array. A line
// replaces the whole video, so an optional field left out of an update is
// cleared. File paths are read at import and copied into media storage.
type VideoInput struct {
	ID              string              `json:"id,omitempty"`
	Title           string              `json:"title"`
	Description     string              `json:"description,omitempty"`
	Tags            []string            `json:"tags,omitempty"`
	Emotion         string              `json:"emotion"`
	Gender          string              `json:"gender"`
	AgeRange        string              `json:"age_range,omitempty"`
	Location        string              `json:"location,omitempty"`
	MediaType       string              `json:"media_type,omitempty"`
	Orientation     string              `json:"orientation,omitempty"`
	DurationSeconds *float64            `json:"duration_seconds,omitempty"`
	Width           *int                `json:"width,omitempty"`
	Height          *int                `json:"height,omitempty"`
	FPS             *float64            `json:"fps,omitempty"`
	Difficulty      string              `json:"difficulty"`
	ViralityScore   *int                `json:"virality_score,omitempty"`
	Model           *catalog.VideoModel `json:"model,omitempty"`
	MediaFile       string              `json:"media_file,omitempty"`
	// UploadID names a finished upload (POST /api/ops/v1/uploads) to take
	// as the full-quality file instead of MediaFile.
	UploadID      string `json:"upload_id,omitempty"`
	PreviewFile   string `json:"preview_file,omitempty"`
	ThumbnailFile string `json:"thumbnail_file,omitempty"`
}

// Limits on free-text fields, generous for real metadata but small enough
// that a runaway value (a whole transcript pasted into a tag) is caught.
// The search filters of the same names share catalog.MaxLocationChars and
// catalog.MaxModelIDChars.
const (
	maxTitleChars       = 300
	maxDescriptionChars = 5000
	maxTags             = 50
	maxTagChars         = 100
	maxModelNameChars   = 200
	maxPixels           = 16384
	maxFPS              = 1000
	maxDurationSeconds  = 24 * 3600
)

// LineError is one problem with one clip: its 1-based line in the import
// file (or position in the posted array) and the field at fault.
type LineError struct {
	Line    int    `json:"line"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

func (e LineError) String() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Message)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Field, e.Message)
}

// validVideo is a validated VideoInput, normalised and with its files resolved.
type validVideo struct {
	line  int
	id    uuid.UUID
	hasID bool
	in    VideoInput
	media string // absolute or baseDir-relative paths of the source files
	// upload, when the clip names one, is its file already in the store.
	upload    *media.UploadFile
	uploadID  uuid.UUID
	preview   string
	thumbnail string
	// probe is the probe of the clip's media file when the importer ran it
	// (ImportProbed): a clip that also brings its preview and thumbnail is
	// then on sale at once, with no media job.
	probe *media.Probe
}

// validator checks clips against the tiers that exist and the files on
// disk. It remembers which files it has seen, so a file shared by many
// lines is looked at once, and which ids it has seen, because one import
// cannot write the same clip twice.
type validator struct {
	tiers   map[string]money.Cents
	baseDir string
	// root, when set, confines every file to this directory (symbolic
	// links resolved).
	root  string
	files map[string]string // path -> problem ("" when fine)
	ids   map[uuid.UUID]int // id -> line
	// upload looks an upload up (nil: uploads cannot be named);
	// uploadLines remembers which line took which.
	upload      func(uuid.UUID) (media.UploadFile, bool, error)
	uploadLines map[uuid.UUID]int
	// conflicts counts the problems that are an upload's state (not yet
	// complete, another clip's file); conflictCode is the first one's.
	conflicts    int
	conflictCode apperr.Code
	// noFiles, when set, refuses every file path with this message (the
	// HTTP import on a node without an import directory).
	noFiles string
	// probed holds the probes the importer ran, by media_file as given.
	probed map[string]media.Probe
}

func newValidator(tiers map[string]money.Cents, baseDir string) *validator {
	return &validator{tiers: tiers, baseDir: baseDir, files: map[string]string{}, ids: map[uuid.UUID]int{}, uploadLines: map[uuid.UUID]int{}}
}

// lineProblems collects the problems of one line of an import.
type lineProblems struct {
	line int
	errs []LineError
}

func (p *lineProblems) bad(field, format string, args ...any) {
	p.errs = append(p.errs, LineError{Line: p.line, Field: field, Message: fmt.Sprintf(format, args...)})
}

// check validates one clip and returns it normalised, with every problem
// found (not only the first) so that one run of the import lists them all,
// in the order of the clip's fields.
func (v *validator) check(line int, in VideoInput) (validVideo, []LineError) {
	p := &lineProblems{line: line}
	c := validVideo{line: line}
	v.checkID(p, &c, in.ID)
	checkText(p, &in)
	checkFacets(p, &in)
	checkMeasures(p, in)
	v.checkTier(p, in.Difficulty)
	checkModel(p, &in)
	v.checkFiles(p, &c, in)
	c.in = in
	return c, p.errs
}

// checkID reads a clip's own id, when it gives one, once per import.
func (v *validator) checkID(p *lineProblems, c *validVideo, raw string) {
	if raw == "" {
		return
	}
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		p.bad("id", "must be a UUID such as 0b9f3a4e-8c51-4f8e-9d2a-6a3c1e7b5d10")
	} else if prev, dup := v.ids[id]; dup {
		p.bad("id", "repeats the id of line %d", prev)
	} else {
		v.ids[id] = p.line
		c.id, c.hasID = id, true
	}
}

// checkText trims and bounds the title and description and normalises
// the tags.
func checkText(p *lineProblems, in *VideoInput) {
	in.Title = strings.TrimSpace(in.Title)
	switch n := utf8.RuneCountInString(in.Title); {
	case n == 0:
		p.bad("title", "is required")
	case n > maxTitleChars:
		p.bad("title", "must be at most %d characters (has %d)", maxTitleChars, n)
	}
	in.Description = strings.TrimSpace(in.Description)
	if n := utf8.RuneCountInString(in.Description); n > maxDescriptionChars {
		p.bad("description", "must be at most %d characters (has %d)", maxDescriptionChars, n)
	}
	in.Tags = normaliseTags(in.Tags, func(format string, args ...any) { p.bad("tags", format, args...) })
}

// checkFacets checks the filterable values: the enums and the location.
func checkFacets(p *lineProblems, in *VideoInput) {
	checkEnum := func(field, value string, allowed []string, required bool) {
		switch {
		case value == "" && required:
			p.bad(field, "is required (one of %s)", strings.Join(allowed, ", "))
		case value != "" && !slices.Contains(allowed, value):
			p.bad(field, "%q is not allowed (one of %s)", apperr.Clip(value), strings.Join(allowed, ", "))
		}
	}
	checkEnum("emotion", in.Emotion, catalog.Emotions(), true)
	checkEnum("gender", in.Gender, catalog.Genders(), true)
	checkEnum("age_range", in.AgeRange, catalog.AgeRanges(), false)
	if in.MediaType == "" {
		in.MediaType = "video"
	}
	checkEnum("media_type", in.MediaType, catalog.MediaTypes(), false)
	checkEnum("orientation", in.Orientation, catalog.Orientations(), false)

	// Locations are a filter facet: one spelling per place.
	in.Location = strings.ToLower(strings.TrimSpace(in.Location))
	if n := utf8.RuneCountInString(in.Location); n > catalog.MaxLocationChars {
		p.bad("location", "must be at most %d characters", catalog.MaxLocationChars)
	}
}

// checkMeasures bounds the numbers a clip states about its file and its
// virality.
func checkMeasures(p *lineProblems, in VideoInput) {
	if d := in.DurationSeconds; d != nil && (math.IsNaN(*d) || *d < 0 || *d > maxDurationSeconds) {
		p.bad("duration_seconds", "must be between 0 and %d", maxDurationSeconds)
	}
	if w := in.Width; w != nil && (*w <= 0 || *w > maxPixels) {
		p.bad("width", "must be between 1 and %d", maxPixels)
	}
	if h := in.Height; h != nil && (*h <= 0 || *h > maxPixels) {
		p.bad("height", "must be between 1 and %d", maxPixels)
	}
	if f := in.FPS; f != nil && (math.IsNaN(*f) || *f <= 0 || *f > maxFPS) {
		p.bad("fps", "must be greater than 0 and at most %d", maxFPS)
	}
	if s := in.ViralityScore; s != nil && (*s < 0 || *s > 100) {
		p.bad("virality_score", "must be between 0 and 100")
	}
}

// checkTier requires a difficulty that names a price tier.
func (v *validator) checkTier(p *lineProblems, difficulty string) {
	switch _, ok := v.tiers[difficulty]; {
	case difficulty == "":
		p.bad("difficulty", "is required (one of %s)", strings.Join(v.tierNames(), ", "))
	case !ok:
		p.bad("difficulty", "%q is not a tier (one of %s)", apperr.Clip(difficulty), strings.Join(v.tierNames(), ", "))
	}
}

// checkModel trims and bounds the model (the person filmed), when given.
func checkModel(p *lineProblems, in *VideoInput) {
	if in.Model == nil {
		return
	}
	m := *in.Model // the caller's value stays as given
	in.Model = &m
	m.ID, m.Name = strings.TrimSpace(m.ID), strings.TrimSpace(m.Name)
	if n := utf8.RuneCountInString(m.ID); n == 0 || n > catalog.MaxModelIDChars {
		p.bad("model.id", "is required and at most %d characters", catalog.MaxModelIDChars)
	}
	if n := utf8.RuneCountInString(m.Name); n == 0 || n > maxModelNameChars {
		p.bad("model.name", "is required and at most %d characters", maxModelNameChars)
	}
}

// checkFiles resolves the clip's files: its full-quality file (a path or
// an upload, exactly one) and the optional preview and thumbnail.
func (v *validator) checkFiles(p *lineProblems, c *validVideo, in VideoInput) {
	if in.UploadID != "" {
		if in.MediaFile != "" {
			p.bad("upload_id", "names the file as media_file does: give one of them")
		} else if msg := v.checkUpload(c, in.UploadID); msg != "" {
			p.bad("upload_id", "%s", msg)
		}
	} else if in.MediaFile == "" {
		p.bad("media_file", "is required")
	} else if path, msg := v.file(in.MediaFile); msg != "" {
		p.bad("media_file", "%s", msg)
	} else {
		c.media = path
	}
	optional := func(field, name string) string {
		if name == "" {
			return ""
		}
		path, msg := v.file(name)
		if msg != "" {
			p.bad(field, "%s", msg)
			return ""
		}
		return path
	}
	c.preview = optional("preview_file", in.PreviewFile)
	c.thumbnail = optional("thumbnail_file", in.ThumbnailFile)
}

// checkUpload resolves an upload id to its stored file, once per import.
// An upload that is not complete, or is another clip's file, is no fault of
// the line: it is counted as a conflict (409), not as invalid input.
func (v *validator) checkUpload(c *validVideo, raw string) string {
	id, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return "must be the upload_id of POST /api/ops/v1/uploads"
	}
	if v.upload == nil {
		return "uploads cannot be named here"
	}
	if prev, dup := v.uploadLines[id]; dup {
		return fmt.Sprintf("is the upload of line %d already", prev)
	}
	f, ok, err := v.upload(id)
	switch {
	case err != nil:
		return "could not be looked up; try again"
	case !ok:
		return "is not an upload of this key (POST /api/ops/v1/uploads)"
	case f.VideoID != uuid.Nil && (!c.hasID || f.VideoID != c.id):
		v.conflict(apperr.UploadClaimed)
		return fmt.Sprintf("is the file of clip %s already: an upload makes one clip", f.VideoID)
	case !f.Complete:
		v.conflict(apperr.UploadIncomplete)
		return fmt.Sprintf("has not all arrived yet: finish its PUT (%d bytes), then import", f.Size)
	}
	v.uploadLines[id] = c.line
	c.upload, c.uploadID = &f, id
	return ""
}

// conflict counts a problem with an upload's state rather than the line's.
func (v *validator) conflict(code apperr.Code) {
	if v.conflicts == 0 {
		v.conflictCode = code
	}
	v.conflicts++
}

// rejection is the error of an import with the problems in bad: a conflict
// (409) when every one of them is about an upload's state, else invalid.
func (v *validator) rejection(bad []LineError) *Error {
	e := &Error{Lines: bad}
	if v.conflicts == len(bad) {
		e.Code = v.conflictCode
	}
	return e
}

// file resolves a path against the base directory and checks that it names
// a regular file; the answer is cached per path.
func (v *validator) file(name string) (string, string) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(v.baseDir, p)
	}
	if v.noFiles != "" {
		return "", v.noFiles
	}
	msg, seen := v.files[p]
	if !seen && v.root != "" && !v.within(p) {
		msg, seen = fmt.Sprintf("%s is outside the import directory", name), true
		v.files[p] = msg
	}
	if !seen {
		st, err := os.Stat(p)
		switch {
		case os.IsNotExist(err):
			msg = fmt.Sprintf("%s does not exist", name)
		case err != nil:
			msg = fmt.Sprintf("%s cannot be read", name)
		case !st.Mode().IsRegular():
			msg = fmt.Sprintf("%s is not a regular file", name)
		}
		v.files[p] = msg
	}
	return p, msg
}

// within reports whether path lies inside the import directory: its real
// location (symbolic links resolved) inside the resolved root. A path that
// does not resolve (a missing file) is judged by its name against the
// directory as configured, so that it is reported missing, not outside.
func (v *validator) within(path string) bool {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return inside(v.root, resolved)
	}
	return inside(v.baseDir, filepath.Clean(path))
}

func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

func (v *validator) tierNames() []string {
	return slices.SortedFunc(maps.Keys(v.tiers), func(a, b string) int {
		return cmp.Or(cmp.Compare(v.tiers[a], v.tiers[b]), strings.Compare(a, b))
	})
}

// normaliseTags trims, lower-cases and de-duplicates tags: they are search
// keywords, and "Coffee" and "coffee " should not count as two.
func normaliseTags(tags []string, bad func(format string, args ...any)) []string {
	if len(tags) > maxTags {
		bad("at most %d tags (has %d)", maxTags, len(tags))
		return nil
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || slices.Contains(out, t) {
			continue
		}
		if utf8.RuneCountInString(t) > maxTagChars {
			bad("a tag must be at most %d characters", maxTagChars)
			continue
		}
		out = append(out, t)
	}
	return out
}
