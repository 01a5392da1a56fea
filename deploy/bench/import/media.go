package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"broll/catalog"
	"broll/catalog/imports"
)

// clipFiles are one distinct clip's real files, relative to the import
// directory.
type clipFiles struct{ full, preview, thumb string }

// shapes are the picture sizes the distinct files cycle through: the three
// orientations, so the probe's figures vary and fill the lines' gaps.
var shapes = []string{"160x90", "90x160", "96x96", "128x72", "72x128"}

// renderMedia makes n distinct small H.264 MP4 files with ffmpeg (each its
// own test pattern, size and length), a preview and a JPEG thumbnail of
// each, in dir, two ffmpeg processes at a time.
func renderMedia(dir string, n int) ([]clipFiles, error) {
	if err := os.MkdirAll(filepath.Join(dir, "media"), 0o755); err != nil {
		return nil, err
	}
	files := make([]clipFiles, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			files[i], errs[i] = renderOne(dir, i)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

func renderOne(dir string, i int) (clipFiles, error) {
	f := clipFiles{
		full:    fmt.Sprintf("media/clip%03d.mp4", i),
		preview: fmt.Sprintf("media/clip%03d-preview.mp4", i),
		thumb:   fmt.Sprintf("media/clip%03d.jpg", i),
	}
	src := fmt.Sprintf("testsrc2=size=%s:rate=%d:duration=%.1f,hue=h=%d", shapes[i%len(shapes)],
		[]int{24, 25, 30}[i%3], 1+float64(i%4)*0.5, i*7%360)
	x264 := []string{"-c:v", "libx264", "-preset", "ultrafast", "-crf", "40", "-pix_fmt", "yuv420p"}
	runs := [][]string{
		append(append([]string{"-f", "lavfi", "-i", src}, x264...), filepath.Join(dir, f.full)),
		append(append([]string{"-f", "lavfi", "-i", src, "-t", "1"}, x264...), filepath.Join(dir, f.preview)),
		{"-f", "lavfi", "-i", src, "-frames:v", "1", filepath.Join(dir, f.thumb)},
	}
	for _, args := range runs {
		cmd := exec.Command("ffmpeg", append([]string{"-v", "error", "-y"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return f, fmt.Errorf("ffmpeg: %w: %s", err, out)
		}
	}
	return f, nil
}

var (
	people  = []string{"Woman", "Man", "Young woman", "Older man", "Teenager", "Couple"}
	actions = []string{"laughing at a phone", "drinking coffee", "driving a car", "unboxing a package",
		"waving at the camera", "cooking dinner", "walking a dog", "working on a laptop"}
	places = []string{"home", "kitchen", "car", "office", "street", "cafe", "park", "gym", "beach", "bedroom"}
)

// writeLines writes n import lines to path, clip i naming the files of
// distinct clip i%len(files) and a title word of its own (benchclipI), so
// a keyword search finds exactly it. Lines give no orientation, duration
// or size: the probe fills them, as for clips straight off a phone.
func writeLines(path string, n int, files []clipFiles, previews bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	enc := json.NewEncoder(f)
	emotions, genders, ages := catalog.Emotions(), catalog.Genders(), catalog.AgeRanges()
	for i := range n {
		cf := files[i%len(files)]
		vir := rng.IntN(101)
		line := imports.VideoInput{
			Title: fmt.Sprintf("%s %s benchclip%d", people[rng.IntN(len(people))], actions[rng.IntN(len(actions))], i),
			Tags:  []string{"ugc", places[rng.IntN(len(places))]}, Emotion: emotions[rng.IntN(len(emotions))],
			Gender: genders[rng.IntN(len(genders))], AgeRange: ages[rng.IntN(len(ages))],
			Location: places[rng.IntN(len(places))], Difficulty: []string{"easy", "medium", "hard"}[rng.IntN(3)],
			ViralityScore: &vir, MediaFile: cf.full,
		}
		if previews {
			line.PreviewFile, line.ThumbnailFile = cf.preview, cf.thumb
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
	}
	return f.Close()
}
