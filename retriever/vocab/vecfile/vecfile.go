// Package vecfile is the on-disk format of the word vectors the vocab
// package embeds (data/embed.bin.gz). It lives apart from vocab so that the
// generator that writes the file (retriever/vocab/gen/embeddings) does not
// import the package that embeds it: a checkout without the file must still
// build the generator.
package vecfile

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// magic starts the file: magic, version, words, dimensions.
const magic = "atrium-embeddings"

// Vectors are a file's contents: Vec holds len(Words) × Dim int8
// components in word order.
type Vectors struct {
	Words []string
	Dim   int
	Vec   []int8
}

// Read reads the gzip file Write writes: a header line
// "atrium-embeddings 1 <words> <dims>", the words one per line, then the
// int8 vectors, words × dims bytes in word order.
func Read(r io.Reader) (*Vectors, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 1<<16)
	head, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("embeddings: header: %w", err)
	}
	f := strings.Fields(head)
	if len(f) != 4 || f[0] != magic || f[1] != "1" {
		return nil, fmt.Errorf("embeddings: bad header %q", strings.TrimSpace(head))
	}
	n, err1 := strconv.Atoi(f[2])
	dim, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || n <= 0 || dim <= 0 || n > 1<<22 || dim > 4096 {
		return nil, fmt.Errorf("embeddings: bad header %q", strings.TrimSpace(head))
	}
	v := &Vectors{Words: make([]string, n), Dim: dim, Vec: make([]int8, n*dim)}
	for i := range n {
		w, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("embeddings: word %d: %w", i, err)
		}
		v.Words[i] = w[:len(w)-1]
	}
	buf := make([]byte, len(v.Vec))
	if _, err := io.ReadFull(br, buf); err != nil {
		return nil, fmt.Errorf("embeddings: vectors: %w", err)
	}
	for i, b := range buf {
		v.Vec[i] = int8(b)
	}
	return v, nil
}

// Write writes the file Read reads: each vector is scaled so its largest
// component is ±127 and rounded to int8 (cosines move by well under 0.01),
// and the gzip stream has an empty header, so the bytes depend only on the
// input and the Go version's compressor.
func Write(w io.Writer, words []string, vecs [][]float32) error {
	if len(words) != len(vecs) || len(words) == 0 {
		return fmt.Errorf("write embeddings: %d words, %d vectors", len(words), len(vecs))
	}
	dim := len(vecs[0])
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintf(bw, "%s 1 %d %d\n", magic, len(words), dim)
	for _, word := range words {
		if word == "" || strings.ContainsAny(word, "\n") {
			return fmt.Errorf("write embeddings: bad word %q", word)
		}
		bw.WriteString(word)
		bw.WriteByte('\n')
	}
	for i, v := range vecs {
		if len(v) != dim {
			return fmt.Errorf("write embeddings: %q has %d dimensions, not %d", words[i], len(v), dim)
		}
		m := float32(0)
		for _, x := range v {
			m = max(m, float32(math.Abs(float64(x))))
		}
		for _, x := range v {
			q := 0.0
			if m > 0 {
				q = math.Round(float64(x / m * 127))
			}
			bw.WriteByte(byte(int8(q)))
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}
