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

	"golang.org/x/image/draw"
)

// maxImageSide is the longest side a screenshot may have: models and
// clients reject larger images, and the v1.9 extension ignores CDP's clip
// scale, so the downscale happens here.
const maxImageSide = 2000

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
	if a.FullPage {
		params["captureBeyondViewport"] = true
	}
	if a.Ref != "" || a.Selector != "" {
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
		params["clip"] = map[string]any{"x": clip.X, "y": clip.Y, "width": clip.Width, "height": clip.Height, "scale": 1}
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
	data, mime, w, h, scaled, err := fitImage(shot.Data, format)
	if err != nil {
		return nil, err
	}
	note := fmt.Sprintf("Screenshot %dx%d (%s).", w, h, mime)
	if scaled {
		note = fmt.Sprintf("Screenshot scaled down to %dx%d to fit %d px (%s).", w, h, maxImageSide, mime)
	}
	return &result{content: []map[string]any{
		{"type": "image", "data": data, "mimeType": mime},
		{"type": "text", "text": note},
	}}, nil
}

// fitImage checks the browser's base64 image and scales it down when a
// side is longer than maxImageSide.
func fitImage(b64, format string) (data, mime string, w, h int, scaled bool, err error) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return "", "", 0, 0, false, fmt.Errorf("the screenshot is not valid base64")
	}
	mime = "image/" + format
	cfg, kind, err := image.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		return "", "", 0, 0, false, fmt.Errorf("the screenshot is not a readable image: %v", err)
	}
	mime = "image/" + kind
	w, h = cfg.Width, cfg.Height
	if w <= maxImageSide && h <= maxImageSide {
		return b64, mime, w, h, false, nil
	}
	src, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		return "", "", 0, 0, false, fmt.Errorf("decode the screenshot: %v", err)
	}
	scale := float64(maxImageSide) / float64(max(w, h))
	nw, nh := max(1, int(float64(w)*scale+0.5)), max(1, int(float64(h)*scale+0.5))
	dst := image.NewRGBA(image.Rect(0, 0, nw, nh))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Over, nil)
	var out bytes.Buffer
	if kind == "jpeg" {
		err = jpeg.Encode(&out, dst, &jpeg.Options{Quality: 80})
	} else {
		err = png.Encode(&out, dst)
	}
	if err != nil {
		return "", "", 0, 0, false, fmt.Errorf("encode the scaled screenshot: %v", err)
	}
	return base64.StdEncoding.EncodeToString(out.Bytes()), mime, nw, nh, true, nil
}
