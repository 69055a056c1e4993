package browser

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"strings"

	"golang.org/x/image/draw"
)

// maxImageSide is the longest side a screenshot may have: models and
// clients reject larger images, and the v1.9 extension ignores CDP's clip
// scale, so the downscale happens here.
const maxImageSide = 2000

// maxFullPageHeight caps a full-page capture, in CSS pixels: a taller
// page would come out as a sliver once scaled to maxImageSide.
const maxFullPageHeight = 4000

func runScreenshot(ctx context.Context, t *Tools, raw json.RawMessage) (*result, error) {
	var a struct {
		target
		Type     string `json:"type"`
		FullPage bool   `json:"fullPage"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, err
	}
	format := a.Type
	switch format {
	case "":
		format = "png"
	case "png", "jpeg":
	default:
		return nil, fmt.Errorf("type %q: want png or jpeg", a.Type)
	}
	params := map[string]any{"format": format}
	if format == "jpeg" {
		params["quality"] = 80
	}
	var notes []string
	switch {
	case a.Ref != "" || a.Selector != "":
		if a.FullPage {
			return nil, fmt.Errorf("give fullPage or an element (ref/selector), not both")
		}
		var clip struct {
			X, Y, Width, Height float64
			Error               string
		}
		expr := fmt.Sprintf(`(() => { const el = %s; if (el.error) return el; el.scrollIntoView({block: "center"});
  const r = el.getBoundingClientRect(); return {X: r.left + scrollX, Y: r.top + scrollY, Width: r.width, Height: r.height}; })()`, elementExpr(a.target))
		if err := t.c.evalInto(ctx, expr, &clip); err != nil {
			return nil, err
		}
		if clip.Error != "" {
			return nil, fmt.Errorf("%s", clip.Error)
		}
		if clip.Width < 1 || clip.Height < 1 {
			return nil, fmt.Errorf("%s has no area on screen to capture", describeTarget(a.target))
		}
		if clip.Height > maxFullPageHeight {
			notes = append(notes, fmt.Sprintf("The element is %.0f px tall: captured its top %d px.", clip.Height, maxFullPageHeight))
			clip.Height = maxFullPageHeight
		}
		params["clip"] = map[string]any{"x": clip.X, "y": clip.Y, "width": clip.Width, "height": clip.Height, "scale": 1}
		params["captureBeyondViewport"] = true
	case a.FullPage:
		var page struct{ W, H float64 }
		if err := t.c.evalInto(ctx, `(() => { const d = document.documentElement, b = document.body || d;
  return {W: Math.max(d.scrollWidth, b.scrollWidth, innerWidth), H: Math.max(d.scrollHeight, b.scrollHeight, innerHeight)}; })()`, &page); err != nil {
			return nil, err
		}
		h := page.H
		if h > maxFullPageHeight {
			h = maxFullPageHeight
			notes = append(notes, fmt.Sprintf("The page is %.0f px tall: captured its top %d px. Scroll (browser_press_key PageDown) and take a viewport screenshot, or capture an element by ref, to see the rest.", page.H, maxFullPageHeight))
		}
		params["clip"] = map[string]any{"x": 0, "y": 0, "width": page.W, "height": h, "scale": 1}
		params["captureBeyondViewport"] = true
	}
	res, err := t.c.CDP(ctx, "Page.captureScreenshot", params)
	if err != nil {
		return nil, err
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := json.Unmarshal(res, &shot); err != nil || shot.Data == "" {
		return nil, fmt.Errorf("Page.captureScreenshot: the browser sent no image")
	}
	img, err := fitImage(shot.Data, t.opts.MaxImageBytes)
	if err != nil {
		return nil, err
	}
	text := fmt.Sprintf("Screenshot %dx%d (%s, %s).", img.w, img.h, img.mime, sizeString(img.bytes))
	if img.note != "" {
		text += " " + img.note
	}
	if len(notes) > 0 {
		text += " " + strings.Join(notes, " ")
	}
	return &result{content: []map[string]any{
		{"type": "image", "data": img.data, "mimeType": img.mime},
		{"type": "text", "text": text},
	}}, nil
}

// fitted is a screenshot made to fit the limits.
type fitted struct {
	data  string // base64
	mime  string
	w, h  int
	bytes int    // decoded size
	note  string // what was done to it, for the model; "" when nothing
}

// fitImage checks the browser's base64 image and makes it fit: at most
// maxImageSide px a side (scaled down) and at most maxBytes decoded
// (re-encoded as JPEG, then scaled down further until it fits).
func fitImage(b64 string, maxBytes int) (fitted, error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return fitted{}, fmt.Errorf("the screenshot is not valid base64")
	}
	cfg, kind, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return fitted{}, fmt.Errorf("the screenshot is not a readable image: %v", err)
	}
	w, h := cfg.Width, cfg.Height
	if w <= maxImageSide && h <= maxImageSide && len(raw) <= maxBytes {
		return fitted{data: b64, mime: "image/" + kind, w: w, h: h, bytes: len(raw)}, nil
	}
	src, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return fitted{}, fmt.Errorf("decode the screenshot: %v", err)
	}
	scale := min(1, float64(maxImageSide)/float64(max(w, h)))
	var why []string
	if scale < 1 {
		why = append(why, fmt.Sprintf("at most %d px a side", maxImageSide))
	}
	var out []byte
	// A large PNG far over the limit will not fit as a PNG once scaled
	// (its bytes go with its area): go straight to JPEG rather than spend
	// time encoding a PNG to discard. A small one is cheap to try.
	pixels := float64(w) * float64(h) * scale * scale
	asJPEG := kind == "jpeg" || pixels > 1e6 && float64(len(raw))*scale*scale > 0.8*float64(maxBytes)
	quality := 80
	nw, nh := w, h
	var dst image.Image
	for try := 0; ; try++ {
		sw, sh := max(1, int(float64(w)*scale+0.5)), max(1, int(float64(h)*scale+0.5))
		if dst == nil || sw != nw || sh != nh {
			nw, nh = sw, sh
			dst = src
			if nw != w || nh != h {
				rgba := image.NewRGBA(image.Rect(0, 0, nw, nh))
				draw.CatmullRom.Scale(rgba, rgba.Bounds(), src, src.Bounds(), draw.Over, nil)
				dst = rgba
			}
		}
		var buf bytes.Buffer
		if asJPEG {
			err = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: quality})
		} else {
			err = png.Encode(&buf, dst)
		}
		if err != nil {
			return fitted{}, fmt.Errorf("encode the screenshot: %v", err)
		}
		out = buf.Bytes()
		if len(out) <= maxBytes || nw == 1 && nh == 1 || try == 8 {
			break
		}
		over := float64(len(out)) / float64(maxBytes)
		switch {
		case !asJPEG:
			asJPEG = true // a PNG too big: JPEG at the same size first
		case quality > 60 && over < 1.5:
			quality = 60 // nearly there: a lower quality is cheaper than a rescale
		default:
			// Bytes go with the area, the square of the scale; aim a
			// little under.
			quality = 60
			scale *= max(0.3, min(0.9, 0.95/math.Sqrt(over)))
		}
	}
	if len(out) > maxBytes {
		return fitted{}, fmt.Errorf("the screenshot does not fit in %s even scaled down to %dx%d", sizeString(maxBytes), nw, nh)
	}
	if len(raw) > maxBytes || asJPEG && kind != "jpeg" {
		why = append(why, fmt.Sprintf("at most %s (browser.maxImageBytes)", sizeString(maxBytes)))
	}
	note := ""
	mime := "image/" + kind
	switch {
	case asJPEG && kind != "jpeg":
		mime = "image/jpeg"
		note = fmt.Sprintf("The %dx%d %s capture was scaled to %dx%d and sent as JPEG (quality %d) to fit %s.", w, h, strings.ToUpper(kind), nw, nh, quality, strings.Join(why, " and "))
		if nw == w && nh == h {
			note = fmt.Sprintf("The %s capture was sent as JPEG (quality %d) to fit %s.", strings.ToUpper(kind), quality, strings.Join(why, " and "))
		}
	case nw != w || nh != h:
		note = fmt.Sprintf("Scaled down from %dx%d to fit %s.", w, h, strings.Join(why, " and "))
	}
	return fitted{data: base64.StdEncoding.EncodeToString(out), mime: mime, w: nw, h: nh, bytes: len(out), note: note}, nil
}

// sizeString renders a byte count for people: "812 KiB", "1 MiB".
func sizeString(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", (n+512)>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
