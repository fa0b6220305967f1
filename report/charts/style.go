package charts

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// seriesColors are ten colours that stay apart from each other and from
// a white page (a qualitative palette in the manner of Tableau's ten).
var seriesColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, // blue
	{0xff, 0x7f, 0x0e, 0xff}, // orange
	{0x2c, 0xa0, 0x2c, 0xff}, // green
	{0xd6, 0x27, 0x28, 0xff}, // red
	{0x94, 0x67, 0xbd, 0xff}, // purple
	{0x8c, 0x56, 0x4b, 0xff}, // brown
	{0xe3, 0x77, 0xc2, 0xff}, // pink
	{0x4d, 0x4d, 0x4d, 0xff}, // dark grey
	{0xa8, 0xa8, 0x00, 0xff}, // olive
	{0x17, 0xa5, 0xb8, 0xff}, // cyan
}

// seriesColor is series i's colour: the ten above, then hues spread by the
// golden angle at a darkness that stays visible on white, so that no two
// series of a chart share a colour.
func seriesColor(i int) color.RGBA {
	if i < len(seriesColors) {
		return seriesColors[i]
	}
	k := i - len(seriesColors)
	h := math.Mod(float64(k)*137.508+15, 360)
	v := 0.55 + 0.2*float64(k%3)/2 // 0.55, 0.65, 0.75
	return hsv(h, 0.85, v)
}

// seriesStyle gives series i its colour, and a dash pattern and glyph that
// change every ten series (so that even a colour-blind reader can tell
// them apart past the first ten).
func seriesStyle(i int) (color.RGBA, []vg.Length, draw.GlyphDrawer) {
	return seriesColor(i), plotutil.Dashes(i / len(seriesColors)), plotutil.Shape(i)
}

func hsv(h, s, v float64) color.RGBA {
	c := v * s
	x := c * (1 - math.Abs(math.Mod(h/60, 2)-1))
	m := v - c
	var r, g, b float64
	switch {
	case h < 60:
		r, g, b = c, x, 0
	case h < 120:
		r, g, b = x, c, 0
	case h < 180:
		r, g, b = 0, c, x
	case h < 240:
		r, g, b = 0, x, c
	case h < 300:
		r, g, b = x, 0, c
	default:
		r, g, b = c, 0, x
	}
	u := func(f float64) uint8 { return uint8(math.Round(255 * (f + m))) }
	return color.RGBA{u(r), u(g), u(b), 0xff}
}

// luminance is the relative luminance of c (0 black … 1 white), as WCAG
// defines it.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		x := float64(v) / 0xffff
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// heatAnchors run from dark purple through blue and green to yellow
// (viridis' path): perceptually ordered, readable by the colour-blind,
// and its top stays a colour on a white page (unlike black-body maps that
// end in white).
var heatAnchors = []color.RGBA{
	{0x44, 0x01, 0x54, 0xff},
	{0x47, 0x2d, 0x7b, 0xff},
	{0x3b, 0x52, 0x8b, 0xff},
	{0x2c, 0x72, 0x8e, 0xff},
	{0x21, 0x91, 0x8c, 0xff},
	{0x28, 0xae, 0x80, 0xff},
	{0x5e, 0xc9, 0x62, 0xff},
	{0xad, 0xdc, 0x30, 0xff},
	{0xe0, 0xd2, 0x1a, 0xff},
}

// heatMap is the heatmaps' palette.ColorMap: heatAnchors interpolated
// linearly between Min and Max.
type heatMap struct {
	min, max, alpha float64
}

var _ palette.ColorMap = (*heatMap)(nil)

func newHeatMap(lo, hi float64) *heatMap { return &heatMap{min: lo, max: hi, alpha: 1} }

func (m *heatMap) At(v float64) (color.Color, error) {
	if v < m.min || v > m.max || math.IsNaN(v) {
		return nil, fmt.Errorf("charts: %g is outside the colour map's %g–%g", v, m.min, m.max)
	}
	f := 0.0
	if m.max > m.min {
		f = (v - m.min) / (m.max - m.min)
	}
	x := f * float64(len(heatAnchors)-1)
	i := min(int(x), len(heatAnchors)-2)
	t := x - float64(i)
	a, b := heatAnchors[i], heatAnchors[i+1]
	mix := func(p, q uint8) uint8 { return uint8(math.Round((float64(p)*(1-t) + float64(q)*t) * m.alpha)) }
	return color.RGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), uint8(math.Round(255 * m.alpha))}, nil
}

func (m *heatMap) Max() float64       { return m.max }
func (m *heatMap) SetMax(v float64)   { m.max = v }
func (m *heatMap) Min() float64       { return m.min }
func (m *heatMap) SetMin(v float64)   { m.min = v }
func (m *heatMap) Alpha() float64     { return m.alpha }
func (m *heatMap) SetAlpha(a float64) { m.alpha = a }

// Palette is n colours evenly spread over the map.
func (m *heatMap) Palette(n int) palette.Palette {
	cs := make(colors, n)
	for i := range cs {
		v := m.min
		if n > 1 {
			v = m.min + (m.max-m.min)*float64(i)/float64(n-1)
		}
		c, _ := m.At(math.Min(v, m.max))
		cs[i] = c
	}
	return cs
}

type colors []color.Color

func (c colors) Colors() []color.Color { return c }
