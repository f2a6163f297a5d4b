package session

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/go-rod/rod/lib/proto"
)

// MaxScreenshotHeight caps the height of a screenshot, in output pixels.
const MaxScreenshotHeight = 8000

// ScreenshotOptions say what to capture and how.
type ScreenshotOptions struct {
	FullPage bool
	Selector string // capture this element's box instead of the viewport
	Format   string // png, jpeg or webp
	Quality  int    // 0–100, jpeg and webp only
	MaxWidth int    // downscale wider captures to this width
}

// Screenshot is a captured image.
type Screenshot struct {
	Data          []byte
	Format        string
	Width, Height int  // of the image, in pixels
	Clipped       bool // the capture was cut at MaxScreenshotHeight
	Scale         float64
}

type captureParams struct {
	Format                string   `json:"format"`
	Quality               int      `json:"quality,omitempty"`
	Clip                  clipRect `json:"clip"`
	CaptureBeyondViewport bool     `json:"captureBeyondViewport"`
	OptimizeForSpeed      bool     `json:"optimizeForSpeed"`
}

type clipRect struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Scale  float64 `json:"scale"`
}

// elementBoxScript returns an element's box in document coordinates, or null.
const elementBoxScript = `(sel) => {
	const el = document.querySelector(sel);
	if (!el) return null;
	el.scrollIntoView({block: "nearest", inline: "nearest"});
	const r = el.getBoundingClientRect();
	return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height};
}`

// Screenshot captures the viewport, the full page or one element, scaled
// down by Chrome itself to MaxWidth so no image is decoded here.
func (p *Page) Screenshot(ctx context.Context, opts ScreenshotOptions) (*Screenshot, error) {
	clip, beyond, err := p.captureArea(ctx, opts)
	if err != nil {
		return nil, err
	}
	clip.Scale = 1
	if opts.MaxWidth > 0 && clip.Width > float64(opts.MaxWidth) {
		clip.Scale = float64(opts.MaxWidth) / clip.Width
	}
	clipped := false
	if clip.Height*clip.Scale > MaxScreenshotHeight {
		clip.Height = math.Floor(MaxScreenshotHeight / clip.Scale)
		clipped = true
	}
	params := captureParams{Format: opts.Format, Clip: clip, CaptureBeyondViewport: beyond, OptimizeForSpeed: true}
	if opts.Format != "png" {
		params.Quality = opts.Quality
	}
	raw, err := p.conn.Call(ctx, p.sessionID, "Page.captureScreenshot", params)
	if err != nil {
		return nil, err
	}
	var res struct {
		Data []byte `json:"data"` // base64 in JSON, decoded by encoding/json
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("decode screenshot: %w", err)
	}
	return &Screenshot{
		Data:    res.Data,
		Format:  opts.Format,
		Width:   int(math.Round(clip.Width * clip.Scale)),
		Height:  int(math.Round(clip.Height * clip.Scale)),
		Clipped: clipped,
		Scale:   clip.Scale,
	}, nil
}

// captureArea returns the region to capture in CSS pixels and whether it lies
// (partly) outside the viewport.
func (p *Page) captureArea(ctx context.Context, opts ScreenshotOptions) (clipRect, bool, error) {
	if opts.Selector != "" {
		return p.elementBox(ctx, opts.Selector)
	}
	metrics, err := proto.PageGetLayoutMetrics{}.Call(p.cdp(ctx))
	if err != nil {
		return clipRect{}, false, err
	}
	vp := metrics.CSSVisualViewport
	if opts.FullPage {
		content := metrics.CSSContentSize
		return clipRect{Width: math.Ceil(content.Width), Height: math.Ceil(content.Height)}, true, nil
	}
	return clipRect{X: vp.PageX, Y: vp.PageY, Width: vp.ClientWidth, Height: vp.ClientHeight}, false, nil
}

func (p *Page) elementBox(ctx context.Context, selector string) (clipRect, bool, error) {
	arg, _ := json.Marshal(selector)
	res, err := proto.RuntimeEvaluate{
		Expression:    "(" + elementBoxScript + ")(" + string(arg) + ")",
		ReturnByValue: true,
	}.Call(p.cdp(ctx))
	if err != nil {
		return clipRect{}, false, err
	}
	if res.ExceptionDetails != nil {
		return clipRect{}, false, Errorf(CodeInvalidInput, "selector %q is not valid CSS", selector)
	}
	if res.Result == nil || res.Result.Value.Nil() {
		return clipRect{}, false, Errorf(CodeTargetNotFound, "no element matches selector %q", selector)
	}
	var box clipRect
	if err := json.Unmarshal([]byte(res.Result.Value.JSON("", "")), &box); err != nil {
		return clipRect{}, false, fmt.Errorf("decode element box: %w", err)
	}
	if box.Width < 1 || box.Height < 1 {
		return clipRect{}, false, Errorf(CodeTargetNotFound, "the element matching %q has no visible box (%gx%g)", selector, box.Width, box.Height)
	}
	return box, true, nil
}
