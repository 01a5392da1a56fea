package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/google/uuid"

	"broll/catalog"
	"broll/catalog/imports"
	"broll/catalog/media"
	"broll/internal/apperr"
)

// MaxCount bounds `brollctl seed-demo --count`.
const MaxCount = 100_000

// Seed imports into cat, through imp, count generated clips that read like a
// real UGC B-roll library, with small real media files, through the same
// path as any import (so their embeddings are queued). The catalog is a function of
// seed: clip i is the same whatever count is, so seeding again with the
// same seed updates those clips instead of adding copies.
func Seed(ctx context.Context, cat *catalog.Service, imp *imports.Service, count int, seed int64) (imports.Result, error) {
	if count < 1 || count > MaxCount {
		return imports.Result{}, apperr.InvalidField("count", "count must be between 1 and %d", MaxCount)
	}
	tiers, err := cat.ListTiers(ctx)
	if err != nil {
		return imports.Result{}, fmt.Errorf("seed: %w", err)
	}
	if len(tiers) == 0 {
		return imports.Result{}, apperr.New(apperr.Invalid, "no difficulty tiers exist; create one with `brollctl tiers set`")
	}
	dir, err := os.MkdirTemp("", "broll-seed-*")
	if err != nil {
		return imports.Result{}, fmt.Errorf("seed: %w", err)
	}
	defer os.RemoveAll(dir)
	files, err := writeDemoMedia(dir)
	if err != nil {
		return imports.Result{}, fmt.Errorf("seed: %w", err)
	}

	names := make([]string, len(tiers))
	for i, t := range tiers {
		names[i] = t.Name
	}
	g := demoGen{seed: uint64(seed), tiers: tierPattern(names), media: files, words: newDemoWords()}
	clips := make([]imports.VideoInput, count)
	for i := range clips {
		clips[i] = g.clip(i)
	}
	probed := probeDemoMedia(ctx, clips)
	for i := range clips {
		if p, ok := probed[clips[i].MediaFile]; ok {
			stateFigures(&clips[i], p)
		}
	}
	res, err := imp.ImportProbed(ctx, clips, probed)
	if err != nil {
		return res, fmt.Errorf("seed: %w", err)
	}
	return res, nil
}

// stateFigures writes the figures of the clip's file, as the probe read
// them, into its line: a demo line states what its file is, so content
// ops' mismatch report (clips status) is empty for the demo catalog. A
// clip whose file was not probed states none; the worker's probe fills
// them.
func stateFigures(c *imports.VideoInput, p media.Probe) {
	w, h := p.Width, p.Height
	c.Width, c.Height, c.Orientation = &w, &h, p.Orientation()
	if p.MediaType == "video" {
		d, fps := p.Duration, p.FPS
		c.DurationSeconds, c.FPS = &d, &fps
	}
}

// probeDemoMedia runs the probe on each demo media file once (clips share
// a few dozen), so that the seeded clips are on sale as soon as the seed
// ends, as clips are once the worker's probe has passed them. A file the
// probe cannot read, or a machine without ffprobe, leaves its clips to the
// worker's media job, which decides as for any import.
func probeDemoMedia(ctx context.Context, clips []imports.VideoInput) map[string]media.Probe {
	probed := map[string]media.Probe{}
	for _, c := range clips {
		if _, seen := probed[c.MediaFile]; seen {
			continue
		}
		if p, err := media.ProbeFile(ctx, c.MediaFile); err == nil {
			probed[c.MediaFile] = p
		}
	}
	return probed
}

// tierPattern repeats tiers (cheapest first) so that cheaper ones are more
// common, as in a real library: for three tiers 4:3:1 over a cycle of 8.
func tierPattern(names []string) []string {
	var p []string
	for i, n := range names {
		reps := max(1, len(names)+1-i)
		if i == len(names)-1 && len(names) > 1 {
			reps = 1
		}
		p = append(p, slices.Repeat([]string{n}, reps)...)
	}
	return p
}

type demoGen struct {
	seed  uint64
	tiers []string
	media map[string][]demoFiles
	words demoWords
}

// clip makes clip i. The enums cycle with pairwise coprime periods (13
// emotions, 3 genders, 5 age ranges, 11 places, 7 orientation slots), so a
// couple of hundred clips already cover every value and mix them well;
// the words come from a random source of the clip's own.
func (g demoGen) clip(i int) imports.VideoInput {
	rng := rand.New(rand.NewPCG(g.seed, uint64(i)))
	var raw [16]byte
	for j := range raw {
		raw[j] = byte(rng.Uint32())
	}
	raw[6] = raw[6]&0x0f | 0x40 // version 4
	raw[8] = raw[8]&0x3f | 0x80 // RFC 4122 variant
	id := uuid.UUID(raw)

	emotions, genders, ages := catalog.Emotions(), catalog.Genders(), catalog.AgeRanges()
	emotion := emotions[i%len(emotions)]
	gender := genders[i%len(genders)]
	ageIdx := i % len(ages)
	place := g.words.places[i%len(g.words.places)]
	orientation := [...]string{"vertical", "horizontal", "vertical", "square", "horizontal", "vertical", "horizontal"}[i%7]
	difficulty := g.tiers[i%len(g.tiers)]
	mediaType := "video"
	if rng.IntN(10) == 0 {
		mediaType = "image"
	}

	subject := pick(rng, g.words.subjects[gender][ageIdx])
	mood := g.words.moods[emotion]
	at := pick(rng, place.at)
	activity := pick(rng, place.activities)
	var title string
	switch rng.IntN(3) {
	case 0:
		title = fmt.Sprintf("%s %s %s", subject, pick(rng, mood.reactions), at)
	case 1:
		title = fmt.Sprintf("%s %s, %s", subject, activity, mood.tail)
	default:
		title = fmt.Sprintf("%s %s %s, %s", subject, activity, at, mood.tail)
	}

	desc := []string{
		fmt.Sprintf("%s %s %s.", subject, activity, at),
		mood.sentence,
		pick(rng, g.words.light),
		demoFraming(orientation, mediaType),
		pick(rng, g.words.uses),
	}

	tags := []string{emotion, place.name, demoPersonWord(gender), "ugc", orientation}
	tags = append(tags, place.tags[rng.IntN(len(place.tags))], mood.tags[rng.IntN(len(mood.tags))])
	if strings.Contains(title+activity, "phone") {
		tags = append(tags, "phone")
	}
	if orientation == "vertical" {
		tags = append(tags, "9:16", "social")
	}

	c := imports.VideoInput{
		ID:          id.String(),
		Title:       title,
		Description: strings.Join(desc, " "),
		Tags:        tags,
		Emotion:     emotion,
		Gender:      gender,
		AgeRange:    ages[ageIdx],
		Location:    place.name,
		MediaType:   mediaType,
		Orientation: orientation,
		Difficulty:  difficulty,
	}
	virality := int(math.Round(math.Max(1, math.Min(99, 50+rng.NormFloat64()*18))))
	c.ViralityScore = &virality
	for _, m := range g.words.models {
		if m.gender == gender && m.age == ages[ageIdx] && rng.IntN(4) != 0 {
			c.Model = &catalog.VideoModel{ID: m.id, Name: m.name}
			break
		}
	}

	files := g.media[orientation][rng.IntN(len(g.media[orientation]))]
	if mediaType == "image" {
		c.MediaFile, c.PreviewFile, c.ThumbnailFile = files.Thumbnail, files.Thumbnail, files.Thumbnail
		return c
	}
	c.MediaFile, c.PreviewFile, c.ThumbnailFile = files.Full, files.Preview, files.Thumbnail
	return c
}

func pick(rng *rand.Rand, xs []string) string { return xs[rng.IntN(len(xs))] }
