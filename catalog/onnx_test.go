package catalog_test

import (
	"context"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/atriumdb/atrium/catalog"
)

const wordPieceJSON = `{
  "version": "1.0",
  "added_tokens": [
    {"id": 0, "content": "[PAD]", "special": true}, {"id": 1, "content": "[UNK]", "special": true},
    {"id": 2, "content": "[CLS]", "special": true}, {"id": 3, "content": "[SEP]", "special": true}],
  "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
  "pre_tokenizer": {"type": "BertPreTokenizer"},
  "post_processor": {"type": "TemplateProcessing",
    "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
    "special_tokens": {"[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]}, "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
  "padding": null,
  "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
    "vocab": {"[PAD]": 0, "[UNK]": 1, "[CLS]": 2, "[SEP]": 3, "the": 4, "sing": 5, "##er": 6, "##s": 7, "concert": 8, ",": 9, "hello": 10, "!": 11, "id": 12, "_": 13}}
}`

const byteBPEJSON = `{
  "version": "1.0",
  "added_tokens": [{"id": 0, "content": "<s>", "special": true}, {"id": 1, "content": "<pad>", "special": true}, {"id": 2, "content": "</s>", "special": true}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
  "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": true, "add_prefix_space": false},
  "padding": {"pad_id": 1},
  "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": "", "end_of_word_suffix": "",
    "vocab": {"<s>": 0, "<pad>": 1, "</s>": 2, "t": 3, "h": 4, "e": 5, "Ġ": 6, "c": 7, "a": 8, "th": 9, "the": 10, "Ġc": 11, "Ġca": 12, "Ġcat": 13, "s": 14},
    "merges": ["t h", "th e", "Ġ c", "Ġc a", "Ġca t"]}
}`

func TestWordPieceTokenizer(t *testing.T) {
	tok, err := catalog.ParseTokenizer([]byte(wordPieceJSON))
	require.NoError(t, err)
	require.Equal(t, []int64{2, 4, 5, 6, 7, 9, 10, 11, 3}, tok.Encode("The Singers, Héllo!", 0))
	require.Equal(t, []int64{2, 1, 8, 3}, tok.Encode("xyz concert", 0))
	require.Equal(t, []int64{2, 12, 13, 12, 3}, tok.Encode("id_id", 0))
	require.Equal(t, []int64{2, 4, 3}, tok.Encode("the singers", 3), "truncation keeps the special tokens")
	require.Equal(t, []int64{2, 4, 2, 3}, tok.Encode("the [CLS]", 0), "special tokens are not split")
}

func TestByteLevelBPETokenizer(t *testing.T) {
	tok, err := catalog.ParseTokenizer([]byte(byteBPEJSON))
	require.NoError(t, err)
	require.Equal(t, []int64{0, 10, 13, 2}, tok.Encode("the cat", 0))
	require.Equal(t, []int64{0, 10, 13, 14, 2}, tok.Encode("the cats", 0))
	// "'s" is split off as a contraction; its apostrophe has no token.
	require.Equal(t, []int64{0, 10, 13, 14, 2}, tok.Encode("the cat's", 0))
	require.Equal(t, int64(1), tok.PadID)
}

// writeGatherModel writes an ONNX model (a TEST FIXTURE generated here, so
// no model file is downloaded): last_hidden_state = Gather(table,
// input_ids), with attention_mask and token_type_ids as inputs like a BERT
// export. Protobuf field numbers are from onnx.proto.
func writeGatherModel(t *testing.T, path string, table [][]float32) {
	t.Helper()
	vocab, hidden := len(table), len(table[0])
	msg := func(num protowire.Number, body []byte) []byte {
		b := protowire.AppendTag(nil, num, protowire.BytesType)
		return protowire.AppendBytes(b, body)
	}
	str := func(num protowire.Number, s string) []byte { return msg(num, []byte(s)) }
	varint := func(num protowire.Number, v uint64) []byte {
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	dim := func(v int64, param string) []byte {
		if param != "" {
			return msg(1, str(2, param))
		}
		return msg(1, varint(1, uint64(v)))
	}
	valueInfo := func(name string, elem uint64, dims ...[]byte) []byte {
		shape := cat(dims...)
		tensorType := cat(varint(1, elem), msg(2, shape))
		return cat(str(1, name), msg(2, msg(1, tensorType)))
	}
	raw := make([]byte, 0, vocab*hidden*4)
	for _, row := range table {
		for _, x := range row {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
		}
	}
	initializer := cat(varint(1, uint64(vocab)), varint(1, uint64(hidden)), varint(2, 1), str(8, "embeddings"), msg(9, raw))
	node := cat(str(1, "embeddings"), str(1, "input_ids"), str(2, "last_hidden_state"), str(3, "gather"), str(4, "Gather"))
	const int64Type, floatType = 7, 1
	graph := cat(
		msg(1, node), str(2, "tiny-encoder"), msg(5, initializer),
		msg(11, valueInfo("input_ids", int64Type, dim(0, "batch"), dim(0, "seq"))),
		msg(11, valueInfo("attention_mask", int64Type, dim(0, "batch"), dim(0, "seq"))),
		msg(11, valueInfo("token_type_ids", int64Type, dim(0, "batch"), dim(0, "seq"))),
		msg(12, valueInfo("last_hidden_state", floatType, dim(0, "batch"), dim(0, "seq"), dim(int64(hidden), ""))),
	)
	model := cat(varint(1, 8), str(2, "atrium-test"), msg(7, graph), msg(8, cat(str(1, ""), varint(2, 13))))
	require.NoError(t, os.WriteFile(path, model, 0o644))
}

func onnxLib(t *testing.T) string {
	lib, err := catalog.ONNXRuntimeLib("")
	if err != nil {
		// Tests run from the package directory; .deps is at the repo root.
		if _, serr := os.Stat("../.deps/onnxruntime/lib/libonnxruntime.so"); serr == nil {
			return "../.deps/onnxruntime/lib/libonnxruntime.so"
		}
		t.Skipf("onnxruntime not installed (run make deps or set ATRIUM_ONNXRUNTIME_LIB): %v", err)
	}
	return lib
}

func TestONNXEmbedderMeanPools(t *testing.T) {
	lib := onnxLib(t)
	dir := t.TempDir()
	table := make([][]float32, 16)
	for i := range table {
		table[i] = []float32{float32(i), float32(i % 3), 1, float32(-i) / 2}
	}
	writeGatherModel(t, filepath.Join(dir, "model.onnx"), table)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(wordPieceJSON), 0o644))

	for _, device := range []string{"cpu", "cuda"} {
		t.Run(device, func(t *testing.T) {
			emb, err := catalog.NewEmbedder(catalog.EmbedderConfig{Kind: "onnx", ModelPath: filepath.Join(dir, "model.onnx"),
				RuntimeLib: lib, Device: device, BatchSize: 2})
			require.NoError(t, err, "cuda must fall back to the CPU, not fail")
			defer emb.(interface{ Close() error }).Close()
			require.Equal(t, 4, emb.Dimension())
			require.Equal(t, "onnx:"+filepath.Base(dir), emb.Name())

			texts := []string{"the singers", "hello", "concert , hello !"}
			got, err := emb.Embed(context.Background(), texts)
			require.NoError(t, err)
			tok, err := catalog.ParseTokenizer([]byte(wordPieceJSON))
			require.NoError(t, err)
			for i, text := range texts {
				ids := tok.Encode(text, 0)
				want := make([]float32, 4)
				for _, id := range ids {
					for k := range want {
						want[k] += table[id][k] / float32(len(ids))
					}
				}
				var n float64
				for _, x := range want {
					n += float64(x * x)
				}
				for k := range want {
					want[k] /= float32(math.Sqrt(n))
				}
				require.InDeltaSlice(t, want, got[i], 1e-5, text)
			}
		})
	}
}

func TestONNXEmbedderErrors(t *testing.T) {
	_, err := catalog.NewEmbedder(catalog.EmbedderConfig{Kind: "onnx"})
	require.ErrorContains(t, err, "--onnx-model")
	_, err = catalog.NewEmbedder(catalog.EmbedderConfig{Kind: "onnx", ModelPath: "/nonexistent/model.onnx"})
	require.Error(t, err)
	_, err = catalog.NewEmbedder(catalog.EmbedderConfig{Kind: "word2vec"})
	require.ErrorIs(t, err, catalog.ErrUnknownEmbedder)
}
