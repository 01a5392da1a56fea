package dashboard

import "math"

// barChart is a small bar chart drawn as inline SVG by the templates: no
// script, no external image, readable without styles.
type barChart struct {
	Label             string // what the chart shows, for screen readers
	Width, Height     float64
	Top, Bottom       float64 // plot area, in SVG units
	Bars              []bar
	MaxLabel          string
	FirstDay, LastDay string
	Empty             bool
}

type bar struct {
	X, Y, W, H float64
	Title      string // shown on hover
}

// newBarChart lays out one bar per value; the tallest fills the plot.
// labels[i] and titles[i] describe value i.
func newBarChart(label string, values []float64, titles []string, maxLabel func(float64) string, first, last string) barChart {
	ch := barChart{Label: label, Width: 720, Height: 152, Top: 8, Bottom: 150, FirstDay: first, LastDay: last}
	peak := 0.0
	for _, v := range values {
		peak = math.Max(peak, v)
	}
	ch.Empty = peak == 0
	ch.MaxLabel = maxLabel(peak)
	if len(values) == 0 {
		return ch
	}
	slot := ch.Width / float64(len(values))
	gap := math.Max(1, slot*0.2)
	for i, v := range values {
		h := 0.0
		if peak > 0 {
			h = (ch.Bottom - ch.Top) * v / peak
		}
		// Days with something get at least a sliver, so they never look empty.
		if v > 0 && h < 2 {
			h = 2
		}
		ch.Bars = append(ch.Bars, bar{
			X: round1(float64(i)*slot + gap/2), Y: round1(ch.Bottom - h), W: round1(slot - gap), H: round1(h),
			Title: titles[i],
		})
	}
	return ch
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func countLabel(v float64) string { return thousands(int64(v)) }
