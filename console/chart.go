package console

import (
	"cmp"
	"fmt"
	"html/template"
	"slices"
	"strings"
	"time"
)

// Charts are inline SVG written here: no script, no request, and every
// string in them escaped. Colours are presentation attributes, which the
// page's Content-Security-Policy allows (style attributes it does not).

var palette = []string{"#1f77b4", "#ff7f0e", "#9467bd", "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#2ca02c"}

const noneColour = "#9e9e9e"

type legendEntry struct {
	Name   string
	Count  int64
	Swatch template.HTML
}

func swatch(colour string) template.HTML {
	return template.HTML(fmt.Sprintf(`<svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="%s"/></svg>`, colour))
}

// verdictBar is a 100% bar of verified, flagged and rejected.
func verdictBar(verified, flagged, rejected int64) template.HTML {
	const w, h = 300.0, 14.0
	total := verified + flagged + rejected
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="bar" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="verdicts">`, w, h, w, h)
	if total == 0 {
		fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="#eeeeee"/>`, w, h)
	}
	x := 0.0
	for _, s := range []struct {
		n      int64
		name   string
		colour string
	}{{verified, "verified", "#2e7d32"}, {flagged, "flagged", "#f9a825"}, {rejected, "rejected", "#c62828"}} {
		if s.n == 0 {
			continue
		}
		sw := w * float64(s.n) / float64(total)
		fmt.Fprintf(&b, `<rect x="%.2f" width="%.2f" height="%g" fill="%s"><title>%s: %d</title></rect>`, x, sw, h, s.colour, s.name, s.n)
		x += sw
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// mixChart stacks, for each time bucket, the count of each effective
// model; colours follow the legend, most used model first.
func mixChart(mix []map[string]int64, since time.Time, width time.Duration) (template.HTML, []legendEntry) {
	totals := map[string]int64{}
	var peak int64
	for _, m := range mix {
		var sum int64
		for name, n := range m {
			totals[name] += n
			sum += n
		}
		peak = max(peak, sum)
	}
	names := make([]string, 0, len(totals))
	for name := range totals {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(totals[b], totals[a]), strings.Compare(a, b))
	})
	colour := map[string]string{}
	var legend []legendEntry
	for i, name := range names {
		c := palette[i%len(palette)]
		if name == "none" {
			c = noneColour
		}
		colour[name] = c
		legend = append(legend, legendEntry{Name: name, Count: totals[name], Swatch: swatch(c)})
	}

	const w, h, pad = 480.0, 120.0, 16.0
	bw := w / float64(len(mix))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="mix" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="effective models over time">`, w, h+pad, w, h+pad)
	fmt.Fprintf(&b, `<line x1="0" y1="%g" x2="%g" y2="%g" stroke="#888888"/>`, h, w, h)
	for i, m := range mix {
		y := h
		start := since.Add(time.Duration(i) * width).UTC()
		for _, name := range names {
			n := m[name]
			if n == 0 || peak == 0 {
				continue
			}
			bh := (h - 4) * float64(n) / float64(peak)
			y -= bh
			fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s from %s: %d</title></rect>`,
				float64(i)*bw+1, y, bw-2, bh, colour[name], template.HTMLEscapeString(name), start.Format("15:04Z"), n)
		}
	}
	axis(&b, since, width, len(mix), w, h, pad)
	fmt.Fprintf(&b, `<text x="2" y="10" class="axis">peak %d per slice</text>`, peak)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), legend
}

// trafficChart stacks, per time slice, client transactions by verdict,
// and marks the slice's canary probes apart below the axis: probes are
// not traffic, and must not hide it.
func trafficChart(client []counts, probes []int64, since time.Time, width time.Duration) template.HTML {
	const w, h, pad, probeH = 480.0, 100.0, 16.0, 10.0
	var peak, probePeak int64
	for i, c := range client {
		peak = max(peak, c.Verified+c.Flagged+c.Rejected)
		probePeak = max(probePeak, probes[i])
	}
	bw := w / float64(max(len(client), 1))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="traffic" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="client transactions over time by verdict, canary probes below">`,
		w, h+probeH+pad, w, h+probeH+pad)
	fmt.Fprintf(&b, `<line x1="0" y1="%g" x2="%g" y2="%g" stroke="#888888"/>`, h, w, h)
	for i, c := range client {
		start := since.Add(time.Duration(i) * width).UTC().Format("15:04:05Z")
		y := h
		for _, s := range []struct {
			n      int64
			name   string
			colour string
		}{{c.Verified, "verified", "#2e7d32"}, {c.Flagged, "flagged", "#f9a825"}, {c.Rejected, "rejected", "#c62828"}} {
			if s.n == 0 || peak == 0 {
				continue
			}
			bh := (h - 14) * float64(s.n) / float64(peak)
			y -= bh
			fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s"><title>%s from %s: %d</title></rect>`,
				float64(i)*bw+1, y, bw-2, bh, s.colour, s.name, start, s.n)
		}
		if probes[i] > 0 {
			ph := 2 + (probeH-3)*float64(probes[i])/float64(probePeak)
			fmt.Fprintf(&b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="#9e9e9e"><title>canary probes from %s: %d</title></rect>`,
				float64(i)*bw+1, h+1, bw-2, ph, start, probes[i])
		}
	}
	axis(&b, since, width, len(client), w, h+probeH, pad)
	fmt.Fprintf(&b, `<text x="2" y="10" class="axis">client transactions, peak %d per %s</text>`, peak, width.Round(time.Second))
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// axis labels five instants of the span, start to end.
func axis(b *strings.Builder, since time.Time, width time.Duration, n int, w, h, pad float64) {
	span := width * time.Duration(n)
	layout := "15:04Z"
	switch {
	case span > 48*time.Hour:
		layout = "Jan 2 15:04Z"
	case span <= 30*time.Minute:
		layout = "15:04:05Z"
	}
	for i := 0; i <= 4; i++ {
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		at := since.Add(span * time.Duration(i) / 4).UTC()
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="%s" class="axis">%s</text>`, w*float64(i)/4, h+pad-3, anchor, at.Format(layout))
	}
}
