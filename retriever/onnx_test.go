package retriever

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/atriumdb/atrium/catalog"
)

// The tests below build a tiny ATR-contract model themselves: an ONNX
// ModelProto written with protowire, and a WordPiece tokenizer.json. The
// model embeds tokens (Gather), sums each marker's segment (from the marker
// to the token before the next marker, or to the last real token) with
// CumSum and GatherND at marker_positions, and outputs
// logit_i = seg_i·w + seg_i·seg_0, so every logit depends on its table's
// tokens and on the question (segment 0). The same arithmetic is done in Go
// from an independent whole-string tokenisation.

// testVocab is the tokenizer's vocabulary; ids are positions.
var testVocab = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[T_th]", "[T_1]", "[T_2]", "[T_3]", "[T_4]", "[T_5]", "[T_6]", "[T_7]", "[T_8]",
	".", "(", ")", ",", "_", "shop", "zoo", "customers", "customer", "id", "orders", "order", "lines", "line", "products", "product",
	"animals", "animal", "keepers", "keeper", "name", "full", "city", "placed", "on", "quantity", "title", "maker", "species",
	"which", "list", "all", "and", "their", "the", "of", "by", "s", "##s", "##er"}

const testMarkers = 8

func testTokenizerJSON(t *testing.T) []byte {
	t.Helper()
	vocab := map[string]int{}
	for i, w := range testVocab {
		vocab[w] = i
	}
	type added struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	}
	var adds []added
	for i := 0; i <= 4+testMarkers; i++ {
		adds = append(adds, added{ID: i, Content: testVocab[i], Special: true})
	}
	tj := map[string]any{
		"version":       "1.0",
		"added_tokens":  adds,
		"normalizer":    map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{"type": "TemplateProcessing",
			"single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}}},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{2}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{3}, "tokens": []string{"[SEP]"}}}},
		"padding": map[string]any{"pad_id": 0},
		"model":   map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
	}
	b, err := json.Marshal(tj)
	require.NoError(t, err)
	return b
}

// onnxBuilder writes ONNX protobuf messages (onnx.proto3 field numbers).
type onnxBuilder struct{}

func (onnxBuilder) msg(num protowire.Number, body []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), body)
}
func (b onnxBuilder) str(num protowire.Number, s string) []byte { return b.msg(num, []byte(s)) }
func (onnxBuilder) varint(num protowire.Number, v int64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), uint64(v))
}

const (
	onnxFloat = 1
	onnxInt64 = 7
)

// tensor is a TensorProto with raw little-endian data.
func (b onnxBuilder) tensor(name string, dtype int64, dims []int64, raw []byte) []byte {
	var out []byte
	for _, d := range dims {
		out = append(out, b.varint(1, d)...)
	}
	out = append(out, b.varint(2, dtype)...)
	out = append(out, b.str(8, name)...)
	return append(out, b.msg(9, raw)...)
}

func f32raw(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func i64raw(v ...int64) []byte {
	out := make([]byte, 8*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint64(out[8*i:], uint64(x))
	}
	return out
}

// valueInfo is a ValueInfoProto of a tensor with symbolic dimensions.
func (b onnxBuilder) valueInfo(name string, dtype int64, dims ...string) []byte {
	var shape []byte
	for _, d := range dims {
		shape = append(shape, b.msg(1, b.str(2, d))...)
	}
	tt := append(b.varint(1, dtype), b.msg(2, shape)...)
	return append(b.str(1, name), b.msg(2, b.msg(1, tt))...)
}

// node is a NodeProto; attrs are ready AttributeProto bodies.
func (b onnxBuilder) node(op string, ins, outs []string, attrs ...[]byte) []byte {
	var out []byte
	for _, in := range ins {
		out = append(out, b.str(1, in)...)
	}
	for _, o := range outs {
		out = append(out, b.str(2, o)...)
	}
	out = append(out, b.str(4, op)...)
	for _, a := range attrs {
		out = append(out, b.msg(5, a)...)
	}
	return out
}

func (b onnxBuilder) intAttr(name string, v int64) []byte {
	return append(append(b.str(1, name), b.varint(3, v)...), b.varint(20, 2)...)
}

func (b onnxBuilder) intsAttr(name string, v ...int64) []byte {
	out := b.str(1, name)
	for _, x := range v {
		out = append(out, b.varint(8, x)...)
	}
	return append(out, b.varint(20, 7)...)
}

// writeSegmentModel writes the test model with embedding table emb
// ([vocab][dim]) and weight vector w ([dim]).
func writeSegmentModel(t *testing.T, path string, emb [][]float32, w []float32) {
	t.Helper()
	b := onnxBuilder{}
	dim := int64(len(w))
	var flat []float32
	for _, row := range emb {
		require.Len(t, row, len(w))
		flat = append(flat, row...)
	}
	inits := [][]byte{
		b.tensor("E", onnxFloat, []int64{int64(len(emb)), dim}, f32raw(flat)),
		b.tensor("W", onnxFloat, []int64{dim, 1}, f32raw(w)),
		b.tensor("ax1", onnxInt64, []int64{1}, i64raw(1)),
		b.tensor("ax2", onnxInt64, []int64{1}, i64raw(2)),
		b.tensor("axis1", onnxInt64, nil, i64raw(1)),
		b.tensor("big", onnxInt64, nil, i64raw(1<<40)),
		b.tensor("one", onnxInt64, nil, i64raw(1)),
		b.tensor("s0", onnxInt64, []int64{1}, i64raw(0)),
		b.tensor("s1", onnxInt64, []int64{1}, i64raw(1)),
	}
	nodes := [][]byte{
		b.node("Gather", []string{"E", "input_ids"}, []string{"X"}, b.intAttr("axis", 0)),
		b.node("Cast", []string{"attention_mask"}, []string{"maskf"}, b.intAttr("to", onnxFloat)),
		b.node("Unsqueeze", []string{"maskf", "ax2"}, []string{"mask3"}),
		b.node("Mul", []string{"X", "mask3"}, []string{"Xm"}),
		b.node("CumSum", []string{"Xm", "axis1"}, []string{"C"}),
		b.node("Sub", []string{"C", "Xm"}, []string{"Cex"}),
		b.node("Unsqueeze", []string{"marker_positions", "ax2"}, []string{"Pi"}),
		b.node("Unsqueeze", []string{"marker_positions", "ax1"}, []string{"Pj"}),
		b.node("Greater", []string{"Pj", "Pi"}, []string{"G"}),
		b.node("Where", []string{"G", "Pj", "big"}, []string{"Cand"}),
		b.node("ReduceMin", []string{"Cand"}, []string{"Next"}, b.intsAttr("axes", 2), b.intAttr("keepdims", 0)),
		b.node("ReduceSum", []string{"attention_mask", "ax1"}, []string{"Len"}, b.intAttr("keepdims", 1)),
		b.node("Min", []string{"Next", "Len"}, []string{"NextC"}),
		b.node("Sub", []string{"NextC", "one"}, []string{"End"}),
		b.node("Unsqueeze", []string{"End", "ax2"}, []string{"EndI"}),
		b.node("GatherND", []string{"C", "EndI"}, []string{"Hi"}, b.intAttr("batch_dims", 1)),
		b.node("GatherND", []string{"Cex", "Pi"}, []string{"Lo"}, b.intAttr("batch_dims", 1)),
		b.node("Sub", []string{"Hi", "Lo"}, []string{"Seg"}),
		b.node("Slice", []string{"Seg", "s0", "s1", "s1"}, []string{"Q"}),
		b.node("Mul", []string{"Seg", "Q"}, []string{"SQ"}),
		b.node("ReduceSum", []string{"SQ", "ax2"}, []string{"Dot"}, b.intAttr("keepdims", 0)),
		b.node("MatMul", []string{"Seg", "W"}, []string{"Lin3"}),
		b.node("Squeeze", []string{"Lin3", "ax2"}, []string{"Lin"}),
		b.node("Add", []string{"Lin", "Dot"}, []string{"logits"}),
	}
	var graph []byte
	for _, n := range nodes {
		graph = append(graph, b.msg(1, n)...)
	}
	graph = append(graph, b.str(2, "atr_test")...)
	for _, in := range inits {
		graph = append(graph, b.msg(5, in)...)
	}
	graph = append(graph, b.msg(11, b.valueInfo("input_ids", onnxInt64, "batch", "seq"))...)
	graph = append(graph, b.msg(11, b.valueInfo("attention_mask", onnxInt64, "batch", "seq"))...)
	graph = append(graph, b.msg(11, b.valueInfo("marker_positions", onnxInt64, "batch", "markers"))...)
	graph = append(graph, b.msg(12, b.valueInfo("logits", onnxFloat, "batch", "markers"))...)

	model := b.varint(1, 8) // IR version 8
	model = append(model, b.str(2, "atrium-test")...)
	model = append(model, b.msg(7, graph)...)
	model = append(model, b.msg(8, append(b.str(1, ""), b.varint(2, 13)...))...)
	require.NoError(t, os.WriteFile(path, model, 0o644))
}

// referenceLogits is the test model's arithmetic on one unpadded sequence.
func referenceLogits(ids, positions []int64, emb [][]float32, w []float32) []float64 {
	seg := make([][]float64, len(positions))
	for i, p := range positions {
		next := int64(len(ids))
		for _, o := range positions {
			if o > p && o < next {
				next = o
			}
		}
		seg[i] = make([]float64, len(w))
		for j := p; j < next; j++ {
			for k := range w {
				seg[i][k] += float64(emb[ids[j]][k])
			}
		}
	}
	out := make([]float64, len(positions))
	for i := range seg {
		for k := range w {
			out[i] += seg[i][k]*float64(w[k]) + seg[i][k]*seg[0][k]
		}
	}
	return out
}

// onnxRuntimeForTest returns the onnxruntime library or skips the test.
func onnxRuntimeForTest(t *testing.T) string {
	t.Helper()
	lib, err := catalog.ONNXRuntimeLib("")
	if err != nil {
		// Tests run in the package directory; the Makefile's copy is at
		// the repository root.
		lib, err = catalog.ONNXRuntimeLib(filepath.Join("..", ".deps", "onnxruntime", "lib", "libonnxruntime.so"))
	}
	if err != nil {
		t.Skipf("onnxruntime library not found (set ATRIUM_ONNXRUNTIME_LIB or run `make deps`): %v", err)
	}
	return lib
}

type onnxFixture struct {
	dir, model, tok string
	emb             [][]float32
	w               []float32
}

func newONNXFixture(t *testing.T, emb [][]float32, w []float32) *onnxFixture {
	t.Helper()
	f := &onnxFixture{dir: t.TempDir(), emb: emb, w: w}
	f.model = filepath.Join(f.dir, "atr.onnx")
	f.tok = filepath.Join(f.dir, "tokenizer.json")
	writeSegmentModel(t, f.model, emb, w)
	require.NoError(t, os.WriteFile(f.tok, testTokenizerJSON(t), 0o644))
	return f
}

func randomFixture(t *testing.T, dim int) *onnxFixture {
	rng := rand.New(rand.NewPCG(3, 4))
	emb := make([][]float32, len(testVocab))
	for i := range emb {
		emb[i] = make([]float32, dim)
		for k := range emb[i] {
			emb[i][k] = float32(rng.NormFloat64() * 0.5)
		}
	}
	w := make([]float32, dim)
	for k := range w {
		w[k] = float32(rng.NormFloat64())
	}
	return newONNXFixture(t, emb, w)
}

func testTable(schema, name string, cols ...string) *TableInfo {
	t := &TableInfo{Schema: schema, Name: name}
	for _, c := range cols {
		t.Columns = append(t.Columns, ColumnInfo{Name: c})
	}
	return t
}

func testWindow(tables ...*TableInfo) []*Candidate {
	out := make([]*Candidate, len(tables))
	for i, t := range tables {
		out[i] = &Candidate{Table: t, Rank: i + 1}
	}
	return out
}

// wholeString encodes the ATR sequence as one string, as a Python exporter
// would, and finds the markers by id: the reference the scorer's piecewise
// encoding must match.
func wholeString(t *testing.T, tok *catalog.Tokenizer, question string, win []*Candidate) ([]int64, []int64) {
	t.Helper()
	text := ThresholdMarker + " " + question
	for i, c := range win {
		text += " " + TableMarker(i+1) + " " + TableText(c.Table)
	}
	ids := tok.Encode(text, 0)
	var pos []int64
	for want := 4; want <= 4+len(win); want++ { // [T_th]=4, [T_i]=4+i
		i := slices.Index(ids, int64(want))
		require.GreaterOrEqual(t, i, 0)
		pos = append(pos, int64(i))
	}
	return ids, pos
}

func TestONNXScorerMatchesReference(t *testing.T) {
	lib := onnxRuntimeForTest(t)
	f := randomFixture(t, 6)
	s, err := NewONNXScorer(ONNXConfig{ModelPath: f.model, RuntimeLib: lib, BatchSize: 3})
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, "cpu", s.Device())
	require.Equal(t, testMarkers, s.MaxWindow())
	tok, err := catalog.LoadTokenizer(f.tok)
	require.NoError(t, err)

	customers := testTable("shop", "customers", "customer_id", "full_name", "city")
	orders := testTable("shop", "orders", "order_id", "customer_id", "placed_on")
	lines := testTable("shop", "order_lines", "order_id", "product_id", "quantity")
	products := testTable("shop", "products", "product_id", "title", "maker")
	animals := testTable("zoo", "animals", "animal_id", "species", "keeper")
	keepers := testTable("zoo", "keepers", "keeper_id", "name")
	windows := [][]*Candidate{
		testWindow(customers, orders, lines, products, animals, keepers),
		testWindow(animals),
		testWindow(keepers, customers, unknownWords()),
		testWindow(products, lines),
		testWindow(orders, customers, products, animals, keepers, lines, customers, orders),
	}
	question := "Which customers ordered products, by city and full name?"
	q := newQuery(question, nil, nil)
	ctx := context.Background()

	check := func(t *testing.T, win []*Candidate, logits []float64, thr float64) {
		t.Helper()
		ids, pos := wholeString(t, tok, question, win)
		want := referenceLogits(ids, pos, f.emb, f.w)
		require.Len(t, logits, len(win))
		require.InDelta(t, want[0], thr, 1e-3*(1+math.Abs(want[0])), "threshold")
		for i := range logits {
			require.InDelta(t, want[i+1], logits[i], 1e-3*(1+math.Abs(want[i+1])), "table %d", i)
		}
	}

	// Five windows of different lengths in one call: two runs of at most 3,
	// padded to the longest sequence and marker count of each.
	logits, thr, err := s.ScoreWindows(ctx, q, windows)
	require.NoError(t, err)
	for i, win := range windows {
		check(t, win, logits[i], thr[i])
	}

	// Concurrent callers share runs and each gets its own answer.
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(windows))
	for range 4 {
		for _, win := range windows {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, th, err := s.Score(ctx, q, win)
				if err != nil {
					errs <- err
					return
				}
				ids, pos := wholeString(t, tok, question, win)
				want := referenceLogits(ids, pos, f.emb, f.w)
				if math.Abs(want[0]-th) > 1e-3*(1+math.Abs(want[0])) {
					errs <- fmt.Errorf("threshold %v, want %v", th, want[0])
				}
				for i := range l {
					if math.Abs(want[i+1]-l[i]) > 1e-3*(1+math.Abs(want[i+1])) {
						errs <- fmt.Errorf("logit %d: %v, want %v", i, l[i], want[i+1])
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	// A window larger than the tokenizer's markers is refused clearly.
	var big []*TableInfo
	for range testMarkers + 1 {
		big = append(big, customers)
	}
	_, _, err = s.Score(ctx, q, testWindow(big...))
	require.ErrorContains(t, err, "--atr-window")

	require.NoError(t, s.Close())
	_, _, err = s.Score(ctx, q, windows[1])
	require.ErrorIs(t, err, errScorerClosed)
}

func unknownWords() *TableInfo {
	return testTable("erp", "gl_journal_entries", "posting_ts", "amount_cents")
}

func TestONNXScorerTruncates(t *testing.T) {
	lib := onnxRuntimeForTest(t)
	f := randomFixture(t, 4)
	const maxTokens = 24
	s, err := NewONNXScorer(ONNXConfig{ModelPath: f.model, TokenizerPath: f.tok, RuntimeLib: lib, MaxTokens: maxTokens, MaxQuestionTokens: 4})
	require.NoError(t, err)
	defer s.Close()
	win := testWindow(
		testTable("shop", "customers", "customer_id", "full_name", "city"),
		testTable("shop", "orders", "order_id", "customer_id", "placed_on"),
		testTable("zoo", "keepers", "keeper_id"))
	q := newQuery("list all the customers and their orders by city", nil, nil)
	enc := s.encode(s.body(" "+q.Text+" "), win)
	require.LessOrEqual(t, len(enc.ids), maxTokens)
	require.Len(t, enc.positions, len(win)+1)
	require.Equal(t, int64(4), enc.ids[enc.positions[0]], "[T_th]")
	for i := range win {
		require.Equal(t, int64(5+i), enc.ids[enc.positions[i+1]], "[T_%d]", i+1)
	}
	require.Equal(t, []int64{2}, enc.ids[:1])
	require.Equal(t, int64(3), enc.ids[len(enc.ids)-1])
	// Question cut to 4 tokens.
	require.Equal(t, int64(1+1+4), enc.positions[1])

	logits, thr, err := s.Score(context.Background(), q, win)
	require.NoError(t, err)
	want := referenceLogits(enc.ids, enc.positions, f.emb, f.w)
	require.InDelta(t, want[0], thr, 1e-3*(1+math.Abs(want[0])))
	for i := range logits {
		require.InDelta(t, want[i+1], logits[i], 1e-3*(1+math.Abs(want[i+1])))
	}
}

func TestFairShares(t *testing.T) {
	l := func(n int) []int64 { return make([]int64, n) }
	require.Equal(t, []int{2, 9, 9}, fairShares([][]int64{l(2), l(30), l(10)}, 20))
	require.Equal(t, []int{2, 30, 10}, fairShares([][]int64{l(2), l(30), l(10)}, 100))
	require.Equal(t, []int{0, 0}, fairShares([][]int64{l(2), l(3)}, 0))
}

// matchFixture is a model whose logit for a table is the number of
// question words among its tokens, and whose threshold is 0.5 for a
// two-word question: one-hot embeddings of the words, [T_th] on its own
// dimension with weight −2.5 (the question segment's self-product is 1 +
// 2 words).
func matchFixture(t *testing.T) *onnxFixture {
	dim := len(testVocab)
	emb := make([][]float32, len(testVocab))
	for i := range emb {
		emb[i] = make([]float32, dim)
		switch {
		case i == 4: // [T_th]
			emb[i][i] = 1
		case i > 4+testMarkers && testVocab[i] != "_" && testVocab[i] != "(" && testVocab[i] != ")" && testVocab[i] != "," && testVocab[i] != ".":
			emb[i][i] = 1
		}
	}
	w := make([]float32, dim)
	w[4] = -2.5
	return newONNXFixture(t, emb, w)
}

func TestONNXScorerATR(t *testing.T) {
	lib := onnxRuntimeForTest(t)
	f := matchFixture(t)
	s, err := NewONNXScorer(ONNXConfig{ModelPath: f.model, RuntimeLib: lib})
	require.NoError(t, err)
	defer s.Close()

	customers := testTable("shop", "customers", "customer_id", "full_name", "city")
	orders := testTable("shop", "orders", "order_id", "customer_id", "placed_on")
	lines := testTable("shop", "order_lines", "order_id", "product_id", "quantity")
	products := testTable("shop", "products", "product_id", "title", "maker")
	animals := testTable("zoo", "animals", "animal_id", "species", "keeper")
	keepers := testTable("zoo", "keepers", "keeper_id", "name")
	// One relevant table ranked low by the hybrid stage: ATR lifts it past
	// the irrelevant ones above it. (Had two relevant tables shared the
	// bottom window with R=2, Algorithm 1 would finalise the threshold
	// there and return every table ranked above it.)
	cands := testWindow(customers, lines, products, animals, orders, keepers, unknownWords())
	q := newQuery("customers orders", nil, nil)
	res, err := adaptiveRetrieve(context.Background(), s, q, cands, 4, 2)
	require.NoError(t, err)
	var got []string
	for _, sc := range res.Ranked[:res.Selected] {
		got = append(got, sc.Table.QualifiedName())
	}
	require.ElementsMatch(t, []string{"shop.customers", "shop.orders"}, got)
	require.InDelta(t, 0.5, res.Threshold, 1e-5)
	require.Greater(t, res.Windows, 1)

	// A question naming nothing in the window: nothing returned.
	res, err = adaptiveRetrieve(context.Background(), s, newQuery("animals keepers", nil, nil), testWindow(customers, orders, lines), 4, 2)
	require.NoError(t, err)
	require.Zero(t, res.Selected)
}

func TestONNXScorerEndToEnd(t *testing.T) {
	lib := onnxRuntimeForTest(t)
	pool, emb := setupCatalog(t)
	f := matchFixture(t)
	s, err := NewONNXScorer(ONNXConfig{ModelPath: f.model, RuntimeLib: lib})
	require.NoError(t, err)
	defer s.Close()
	r, err := New(pool, Config{Window: 6, Retain: 3}, Options{Embedder: emb, Scorer: s})
	require.NoError(t, err)
	res, err := r.Retrieve(context.Background(), "customers orders")
	require.NoError(t, err)
	var got []string
	for _, ti := range res.ATR {
		got = append(got, ti.QualifiedName())
	}
	require.ElementsMatch(t, []string{"shop.customers", "shop.orders"}, got)
}

func TestONNXScorerErrors(t *testing.T) {
	lib := onnxRuntimeForTest(t)
	f := randomFixture(t, 4)
	dir := t.TempDir()

	_, err := NewONNXScorer(ONNXConfig{ModelPath: filepath.Join(dir, "missing.onnx"), RuntimeLib: lib})
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "missing.onnx")

	broken := filepath.Join(dir, "broken.onnx")
	require.NoError(t, os.WriteFile(broken, []byte("not a model"), 0o644))
	_, err = NewONNXScorer(ONNXConfig{ModelPath: broken, TokenizerPath: f.tok, RuntimeLib: lib})
	require.ErrorContains(t, err, "broken.onnx")

	// No tokenizer beside the model.
	lone := filepath.Join(dir, "lone.onnx")
	raw, err := os.ReadFile(f.model)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(lone, raw, 0o644))
	_, err = NewONNXScorer(ONNXConfig{ModelPath: lone, RuntimeLib: lib})
	require.ErrorContains(t, err, filepath.Join(dir, "tokenizer.json"))

	// A tokenizer without the ATR markers.
	plain := filepath.Join(dir, "plain.json")
	var tj map[string]any
	require.NoError(t, json.Unmarshal(testTokenizerJSON(t), &tj))
	tj["added_tokens"] = []any{}
	b, err := json.Marshal(tj)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(plain, b, 0o644))
	_, err = NewONNXScorer(ONNXConfig{ModelPath: f.model, TokenizerPath: plain, RuntimeLib: lib})
	require.ErrorContains(t, err, "[T_th]")
	require.ErrorContains(t, err, "plain.json")

	// A model that breaks the contract (the catalog's embedder model shape:
	// no marker_positions, no logits).
	wrong := filepath.Join(dir, "wrong.onnx")
	b2 := onnxBuilder{}
	graph := b2.msg(1, b2.node("Identity", []string{"input_ids"}, []string{"out"}))
	graph = append(graph, b2.msg(11, b2.valueInfo("input_ids", onnxInt64, "batch", "seq"))...)
	graph = append(graph, b2.msg(12, b2.valueInfo("out", onnxInt64, "batch", "seq"))...)
	model := append(b2.varint(1, 8), b2.msg(7, graph)...)
	model = append(model, b2.msg(8, append(b2.str(1, ""), b2.varint(2, 13)...))...)
	require.NoError(t, os.WriteFile(wrong, model, 0o644))
	_, err = NewONNXScorer(ONNXConfig{ModelPath: wrong, TokenizerPath: f.tok, RuntimeLib: lib})
	require.ErrorContains(t, err, "marker_positions")
	require.ErrorContains(t, err, "wrong.onnx")

	_, err = NewONNXScorer(ONNXConfig{ModelPath: f.model, RuntimeLib: lib, Device: "gpu7"})
	require.ErrorContains(t, err, "cuda:N")
}

// TestONNXScorerCUDA checks the CUDA path: on a machine whose onnxruntime
// has a working CUDA provider the scorer runs there and agrees with the CPU;
// elsewhere cuda:0 is a start-up error (ErrCUDAUnavailable) unless fallback
// is allowed, which runs on the CPU.
func TestONNXScorerCUDA(t *testing.T) {
	lib := onnxRuntimeForTest(t)
	f := randomFixture(t, 6)
	gpu, err := NewONNXScorer(ONNXConfig{ModelPath: f.model, RuntimeLib: lib, Device: "cuda:0"})
	if errors.Is(err, ErrCUDAUnavailable) {
		t.Logf("no CUDA here: %v", err)
		require.ErrorContains(t, err, "--atr-device-fallback")
		s, err := NewONNXScorer(ONNXConfig{ModelPath: f.model, RuntimeLib: lib, Device: "cuda:0", DeviceFallback: true})
		require.NoError(t, err)
		defer s.Close()
		require.Equal(t, "cpu", s.Device())
		return
	}
	require.NoError(t, err)
	defer gpu.Close()
	require.Equal(t, "cuda:0", gpu.Device())
	cpu, err := NewONNXScorer(ONNXConfig{ModelPath: f.model, RuntimeLib: lib})
	require.NoError(t, err)
	defer cpu.Close()
	q := newQuery("which customers ordered products", nil, nil)
	win := testWindow(testTable("shop", "customers", "customer_id", "city"), testTable("shop", "orders", "order_id"))
	gl, gt, err := gpu.Score(context.Background(), q, win)
	require.NoError(t, err)
	cl, ct, err := cpu.Score(context.Background(), q, win)
	require.NoError(t, err)
	require.InDelta(t, ct, gt, 1e-3)
	require.InDeltaSlice(t, cl, gl, 1e-3)
}
