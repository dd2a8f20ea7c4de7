package slackchart

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"io"
)

// writePNG writes an opaque image as an 8-bit RGB PNG, every row with
// the Up filter, compressed at zlib's best speed. image/png tries all
// five filters on every row, which for a chart costs more than drawing
// it; on a chart, whose rows mostly repeat the row above, Up alone
// compresses as well.
func writePNG(w io.Writer, m *image.RGBA) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	b := m.Bounds()
	width, height := b.Dx(), b.Dy()
	if _, err := bw.WriteString("\x89PNG\r\n\x1a\n"); err != nil {
		return err
	}
	var hdr [13]byte
	binary.BigEndian.PutUint32(hdr[0:], uint32(width))
	binary.BigEndian.PutUint32(hdr[4:], uint32(height))
	hdr[8], hdr[9] = 8, 2 // 8 bits per sample, truecolour
	if err := writeChunk(bw, "IHDR", hdr[:]); err != nil {
		return err
	}
	cw := &chunkWriter{w: bw, typ: "IDAT"}
	zw, err := zlib.NewWriterLevel(cw, zlib.BestSpeed)
	if err != nil {
		return err
	}
	row := make([]byte, 1+3*width)
	row[0] = 2 // Up: each byte less the one above it
	zero := make([]byte, 4*width)
	for y := range height {
		cur := m.Pix[y*m.Stride : y*m.Stride+4*width]
		up := zero
		if y > 0 {
			up = m.Pix[(y-1)*m.Stride : (y-1)*m.Stride+4*width]
		}
		out := row[1:]
		for x := 0; x < width; x++ {
			j, k := 4*x, 3*x
			out[k] = cur[j] - up[j]
			out[k+1] = cur[j+1] - up[j+1]
			out[k+2] = cur[j+2] - up[j+2]
		}
		if _, err := zw.Write(row); err != nil {
			return err
		}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := cw.flush(); err != nil {
		return err
	}
	if err := writeChunk(bw, "IEND", nil); err != nil {
		return err
	}
	return bw.Flush()
}

func writeChunk(w io.Writer, typ string, data []byte) error {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc.Sum32())
	for _, p := range [][]byte{n[:], []byte(typ), data, sum[:]} {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}

// chunkWriter cuts what is written to it into chunks of up to 64 KiB.
type chunkWriter struct {
	w   io.Writer
	typ string
	buf []byte
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), 64<<10-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == 64<<10 {
			if err := c.flush(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	err := writeChunk(c.w, c.typ, c.buf)
	c.buf = c.buf[:0]
	return err
}
