package imports

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/google/uuid"

	"broll/catalog/media"
	"broll/internal/apperr"
)

// Result counts what an import did.
type Result struct {
	Created int `json:"created"`
	Updated int `json:"updated"`
	// Queued is how many clips were queued for the embedding worker: the
	// new ones and those whose embedded text changed. Their jobs are
	// recorded with the clips (job outbox), so they count even while the
	// queue is away; a catalog built without a queue reports 0.
	Queued int `json:"queued"`
}

// Error lists every bad clip of a rejected import. Nothing of such an
// import is written. It unwraps to an invalid_request *apperr.Error whose
// "errors" field carries the lines, so the HTTP layer renders it as a 400.
type Error struct {
	Lines []LineError
	// Code is the conflict every problem is (upload_incomplete,
	// upload_claimed: the lines are fine, the uploads they name cannot be
	// taken now); "" when some line is invalid.
	Code apperr.Code
}

// errorsShown bounds the summary; the full list is in Lines.
const errorsShown = 5

// BadLines counts the lines at fault; Lines has one entry per problem, so
// a line with several problems appears in it several times.
func (e *Error) BadLines() int {
	bad := map[int]bool{}
	for _, l := range e.Lines {
		bad[l.Line] = true
	}
	return len(bad)
}

func (e *Error) Error() string {
	var b strings.Builder
	what := "invalid line(s)"
	if e.Code != "" {
		what = "line(s) naming an upload that cannot be taken now"
	}
	fmt.Fprintf(&b, "import rejected, nothing was imported: %d %s", e.BadLines(), what)
	for i, l := range e.Lines {
		if i == errorsShown {
			fmt.Fprintf(&b, "; and %d more problem(s)", len(e.Lines)-errorsShown)
			break
		}
		b.WriteString("; ")
		b.WriteString(l.String())
	}
	return b.String()
}

// Unwrap makes the rejection an invalid_request (or its conflict) for
// apperr.As and CodeOf.
func (e *Error) Unwrap() error {
	code := e.Code
	if code == "" {
		code = apperr.Invalid
	}
	return apperr.New(code, "%s", e.Error()).With("errors", e.Lines)
}

// maxLineBytes bounds one clip line; real lines are a few hundred bytes.
const maxLineBytes = 1 << 20

// Import reads clips as JSON Lines (blank lines skipped) and imports them:
// see ImportVideos. Relative file paths resolve against baseDir (the
// directory of the file, or "" for the working directory). progress, if
// not nil, is called every few thousand clips and once at the end.
func (s *Service) Import(ctx context.Context, r io.Reader, baseDir string, progress func(done, total int)) (Result, error) {
	v, err := s.newValidator(ctx, baseDir)
	if err != nil {
		return Result{}, err
	}
	var clips []validVideo
	var bad []LineError
	err = eachLine(r, func(line int, b []byte, tooLong bool) {
		if tooLong {
			bad = append(bad, LineError{Line: line, Message: fmt.Sprintf("is longer than %d bytes", maxLineBytes)})
			return
		}
		in, lerr := decodeVideoLine(b)
		if lerr != nil {
			lerr.Line = line
			bad = append(bad, *lerr)
			return
		}
		c, errs := v.check(line, in)
		bad = append(bad, errs...)
		if len(bad) == 0 {
			clips = append(clips, c)
		}
	})
	if err != nil {
		return Result{}, fmt.Errorf("import: read: %w", err)
	}
	if len(bad) > 0 {
		return Result{}, v.rejection(bad)
	}
	return s.importValid(ctx, clips, progress)
}

// ImportVideos validates every clip, and only if all are valid copies their
// files into media storage and writes them in one transaction: a clip whose
// id exists is replaced, any other is created (with a new id when it has
// none). New clips and clips whose embedded text changed get their
// embedding reset and are queued for the worker. A LineError's Line is the
// clip's 1-based position in clips.
func (s *Service) ImportVideos(ctx context.Context, clips []VideoInput, baseDir string, progress func(done, total int)) (Result, error) {
	v, err := s.newValidator(ctx, baseDir)
	if err != nil {
		return Result{}, err
	}
	return s.importVideos(ctx, v, clips, progress)
}

// ImportVideosWithin is ImportVideos for callers that must not read just any
// file (the HTTP import): every file, relative or absolute, must resolve,
// symbolic links followed, to a regular file inside root, and the uploads
// named must be those of the ops key keyID. Without root (none set, or not
// there) clips may still name uploads; a file path is then refused.
func (s *Service) ImportVideosWithin(ctx context.Context, keyID uuid.UUID, root string, clips []VideoInput) (Result, error) {
	v, err := s.newValidator(ctx, root)
	if err != nil {
		return Result{}, err
	}
	if s.media != nil {
		v.upload = func(id uuid.UUID) (media.UploadFile, bool, error) { return s.uploads.Find(ctx, keyID, id) }
	}
	if root == "" {
		v.noFiles = "this server takes no file paths (no import directory): name an upload_id instead"
	} else if v.root, err = filepath.EvalSymlinks(v.baseDir); err != nil {
		v.noFiles = "this server's import directory is not available: name an upload_id instead"
	}
	return s.importVideos(ctx, v, clips, nil)
}

// ImportProbed is ImportVideos for clips whose media files the caller has
// probed already (probed holds the probes by media_file as given): a clip
// whose file was probed and that brings its preview and thumbnail is on
// sale at once, with no media job. The demo seed, which makes its own
// files, imports this way.
func (s *Service) ImportProbed(ctx context.Context, clips []VideoInput, probed map[string]media.Probe) (Result, error) {
	v, err := s.newValidator(ctx, "")
	if err != nil {
		return Result{}, err
	}
	v.probed = probed
	return s.importVideos(ctx, v, clips, nil)
}

func (s *Service) importVideos(ctx context.Context, v *validator, clips []VideoInput, progress func(done, total int)) (Result, error) {
	valid := make([]validVideo, 0, len(clips))
	var bad []LineError
	for i, in := range clips {
		c, errs := v.check(i+1, in)
		bad = append(bad, errs...)
		if p, ok := v.probed[in.MediaFile]; ok && c.upload == nil {
			c.probe = &p
		}
		valid = append(valid, c)
	}
	if len(bad) > 0 {
		return Result{}, v.rejection(bad)
	}
	return s.importValid(ctx, valid, progress)
}

func (s *Service) newValidator(ctx context.Context, baseDir string) (*validator, error) {
	tiers, err := s.tierPrices(ctx)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if baseDir != "" {
		if baseDir, err = filepath.Abs(baseDir); err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
	}
	v := newValidator(tiers, baseDir)
	if s.media != nil {
		v.upload = func(id uuid.UUID) (media.UploadFile, bool, error) { return s.uploads.Find(ctx, uuid.Nil, id) }
	}
	return v, nil
}

// importValid writes clips that passed validation with their jobs (see
// writeVideos), then hands the jobs to the queue. Handing over happens
// after the commit so the worker never looks for a row that is not there
// yet; should the queue be away, the jobs stay recorded and the worker's
// relay queues them when it is back: the import has succeeded either way.
func (s *Service) importValid(ctx context.Context, clips []validVideo, progress func(done, total int)) (Result, error) {
	if len(clips) == 0 {
		return Result{}, nil
	}
	if s.media == nil {
		return Result{}, errors.New("import: no media store configured")
	}
	for i := range clips {
		if !clips[i].hasID {
			clips[i].id = uuid.New()
		}
	}
	res, jobs, err := s.writeVideos(ctx, clips, progress)
	if err != nil {
		return Result{}, err
	}
	// The jobs are recorded; a queue that is away delays them only.
	_, _ = s.cat.Relay(ctx, jobs)
	if progress != nil {
		progress(len(clips), len(clips))
	}
	return res, nil
}

// eachLine calls fn for every non-blank line with its 1-based number. A
// line over maxLineBytes is reported as too long and skipped, so one bad
// line does not hide the problems of the lines after it.
func eachLine(r io.Reader, fn func(line int, b []byte, tooLong bool)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	line := 0
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(buf) > maxLineBytes {
				line++
				fn(line, nil, true)
				if err := skipLine(br); err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				buf = buf[:0]
			}
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if len(buf) > 0 || err == nil {
			line++
			if b := bytes.TrimSpace(buf); len(b) > maxLineBytes {
				fn(line, nil, true)
			} else if len(b) > 0 {
				fn(line, b, false)
			}
		}
		if err != nil {
			return nil
		}
		buf = buf[:0]
	}
}

func skipLine(br *bufio.Reader) error {
	for {
		_, err := br.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// decodeVideoLine parses one line strictly: unknown fields are refused so a
// misspelt optional field ("orientaton") is not silently dropped.
func decodeVideoLine(b []byte) (VideoInput, *LineError) {
	var in VideoInput
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, describeJSONError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return in, &LineError{Message: "has more after the JSON object (one clip per line)"}
	}
	return in, nil
}

func describeJSONError(err error) *LineError {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return &LineError{Message: "is not valid JSON: " + syntax.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &LineError{Message: "is not valid JSON: it ends too early"}
	case errors.As(err, &typ):
		if typ.Field == "" {
			return &LineError{Message: "must be a JSON object"}
		}
		return &LineError{Field: typ.Field, Message: "must be " + describeType(typ.Type)}
	}
	// encoding/json has no error type for unknown fields; its message is
	// the only place the field's name is found.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &LineError{Field: strings.Trim(name, `"`), Message: "is not a known field"}
	}
	return &LineError{Message: "is not a valid clip: " + strings.TrimPrefix(err.Error(), "json: ")}
}

func describeType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "a list of strings"
	case reflect.Struct:
		return `an object like {"id": "...", "name": "..."}`
	}
	return "of another type"
}
