package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
)

// screenshot renders an HTML file with headless Chromium, networking
// off, and crops the white space below the content.
func screenshot(ctx context.Context, bin, htmlPath, pngPath, tmp string) error {
	profile, err := os.MkdirTemp(tmp, "chromium-")
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return err
	}
	raw := filepath.Join(profile, "shot.png")
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--no-first-run", "--user-data-dir="+profile, "--hide-scrollbars",
		"--force-device-scale-factor=2", "--window-size=760,900",
		"--screenshot="+raw, "file://"+abs)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("chromium: %w\n%s", err, out.Bytes())
	}
	return cropBottom(raw, pngPath, 24)
}

// cropBottom copies a PNG without the white rows below its content,
// keeping margin pixels of white.
func cropBottom(in, out string, margin int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	b := img.Bounds()
	last := b.Min.Y
	for y := b.Max.Y - 1; y >= b.Min.Y && last == b.Min.Y; y-- {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				last = y
				break
			}
		}
	}
	bottom := min(b.Max.Y, last+1+margin)
	type subImager interface {
		SubImage(r image.Rectangle) image.Image
	}
	cropped := img
	if s, ok := img.(subImager); ok {
		cropped = s.SubImage(image.Rect(b.Min.X, b.Min.Y, b.Max.X, bottom))
	}
	w, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := png.Encode(w, cropped); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
