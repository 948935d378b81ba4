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
	fmt.Fprintf(&b, `<text x="0" y="%g" class="axis">%s</text>`, h+pad-3, since.UTC().Format("Jan 2 15:04Z"))
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end" class="axis">now</text>`, w, h+pad-3)
	fmt.Fprintf(&b, `<text x="2" y="10" class="axis">peak %d per slice</text>`, peak)
	b.WriteString(`</svg>`)
	return template.HTML(b.String()), legend
}
