package catalog_test

import (
	"testing"

	"github.com/atriumdb/atrium/catalog"
)

// FuzzTokenizerEncode feeds any text a question or a catalog document may
// hold to both tokenizer kinds: Encode must not panic, every id must be in
// the vocabulary, and a limit must be kept (a limit that leaves room for
// the special tokens: Encode keeps them, and embedders ask for 256).
func FuzzTokenizerEncode(f *testing.F) {
	for _, s := range []string{"The Singers, Héllo!", "the cat's", "id_id [CLS] [SEP]", "", " ", "\xff\xfe\x00", "中文 テスト 😀", "a\u0301\u200b\ttab"} {
		f.Add(s, 0)
		f.Add(s, 3)
	}
	var toks []*catalog.Tokenizer
	for _, js := range []string{wordPieceJSON, byteBPEJSON} {
		tok, err := catalog.ParseTokenizer([]byte(js))
		if err != nil {
			f.Fatal(err)
		}
		toks = append(toks, tok)
	}
	maxID := []int64{13, 14} // the largest id of each test vocabulary
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit != 0 {
			limit = 8 + min(max(limit, 0), 56)
		}
		for i, tok := range toks {
			ids := tok.Encode(s, limit)
			if limit > 0 && len(ids) > limit {
				t.Fatalf("tokenizer %d: %d ids for limit %d", i, len(ids), limit)
			}
			for _, id := range ids {
				if id < 0 || id > maxID[i] {
					t.Fatalf("tokenizer %d: id %d for %q is outside the vocabulary", i, id, s)
				}
			}
		}
	})
}
