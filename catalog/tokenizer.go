package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer encodes text the way a Hugging Face tokenizer.json says: its
// normalizer, pre-tokenizer, model (WordPiece or BPE) and post-processor
// (special tokens around the sequence). It covers what sentence-embedding
// models ship: BERT-style WordPiece and byte-level (GPT-2/RoBERTa) or
// Metaspace (SentencePiece-style) BPE. It is safe for concurrent use.
type Tokenizer struct {
	modelType string // WordPiece or BPE
	vocab     map[string]int64
	unkID     int64 // -1 when the model has no unknown token
	// WordPiece
	prefix       string
	maxWordChars int
	// BPE
	ranks      map[[2]string]int
	byteLevel  bool
	metaspace  string // replacement rune, e.g. "▁", when the pre-tokenizer is Metaspace
	addPrefix  bool   // add a leading space/replacement before the first word
	byteFallbk bool
	endSuffix  string // end_of_word_suffix
	contPrefix string // continuing_subword_prefix for BPE

	normalize func(string) string
	bertSplit bool // BertPreTokenizer / Whitespace split (WordPiece models)

	prefixIDs, suffixIDs []int64 // special tokens around a single sequence
	PadID                int64
	added                map[string]int64 // special added tokens matched verbatim
}

type tokJSON struct {
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Padding       *struct {
		PadID int64 `json:"pad_id"`
	} `json:"padding"`
	AddedTokens []struct {
		ID      int64  `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Model struct {
		Type                    string           `json:"type"`
		Vocab                   map[string]int64 `json:"vocab"`
		UnkToken                *string          `json:"unk_token"`
		ContinuingSubwordPrefix *string          `json:"continuing_subword_prefix"`
		EndOfWordSuffix         *string          `json:"end_of_word_suffix"`
		MaxInputCharsPerWord    int              `json:"max_input_chars_per_word"`
		Merges                  json.RawMessage  `json:"merges"`
		ByteFallback            bool             `json:"byte_fallback"`
	} `json:"model"`
}

// LoadTokenizer reads a Hugging Face tokenizer.json.
func LoadTokenizer(path string) (*Tokenizer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: tokenizer: %w", err)
	}
	t, err := ParseTokenizer(b)
	if err != nil {
		return nil, fmt.Errorf("catalog: tokenizer %s: %w", path, err)
	}
	return t, nil
}

// ParseTokenizer parses the contents of a tokenizer.json.
func ParseTokenizer(data []byte) (*Tokenizer, error) {
	var tj tokJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, fmt.Errorf("parse: %w", err)
	}
	t := &Tokenizer{modelType: tj.Model.Type, vocab: tj.Model.Vocab, unkID: -1, added: map[string]int64{}}
	if t.modelType == "" {
		// Older files leave the type out; merges mean BPE.
		if len(tj.Model.Merges) > 0 {
			t.modelType = "BPE"
		} else {
			t.modelType = "WordPiece"
		}
	}
	if len(t.vocab) == 0 {
		return nil, errors.New("model has no vocabulary")
	}
	for _, a := range tj.AddedTokens {
		if _, ok := t.vocab[a.Content]; !ok {
			t.vocab[a.Content] = a.ID
		}
		if a.Special {
			t.added[a.Content] = a.ID
		}
	}
	if tj.Model.UnkToken != nil {
		id, ok := t.vocab[*tj.Model.UnkToken]
		if !ok {
			return nil, fmt.Errorf("unk_token %q is not in the vocabulary", *tj.Model.UnkToken)
		}
		t.unkID = id
	}
	if tj.Padding != nil {
		t.PadID = tj.Padding.PadID
	}
	switch t.modelType {
	case "WordPiece":
		t.prefix = "##"
		if tj.Model.ContinuingSubwordPrefix != nil {
			t.prefix = *tj.Model.ContinuingSubwordPrefix
		}
		t.maxWordChars = tj.Model.MaxInputCharsPerWord
		if t.maxWordChars <= 0 {
			t.maxWordChars = 100
		}
		t.bertSplit = true
	case "BPE":
		t.ranks = map[[2]string]int{}
		var asStrings []string
		var asPairs [][2]string
		if err := json.Unmarshal(tj.Model.Merges, &asStrings); err == nil {
			for i, m := range asStrings {
				a, b, ok := strings.Cut(m, " ")
				if !ok {
					return nil, fmt.Errorf("merge %d %q is not two tokens", i, m)
				}
				t.ranks[[2]string{a, b}] = i
			}
		} else if err := json.Unmarshal(tj.Model.Merges, &asPairs); err == nil {
			for i, p := range asPairs {
				t.ranks[p] = i
			}
		} else {
			return nil, fmt.Errorf("merges: %w", err)
		}
		t.byteFallbk = tj.Model.ByteFallback
		if tj.Model.EndOfWordSuffix != nil {
			t.endSuffix = *tj.Model.EndOfWordSuffix
		}
		if tj.Model.ContinuingSubwordPrefix != nil {
			t.contPrefix = *tj.Model.ContinuingSubwordPrefix
		}
	default:
		return nil, fmt.Errorf("model type %q is not supported (WordPiece or BPE)", t.modelType)
	}
	var err error
	if t.normalize, err = parseNormalizer(tj.Normalizer); err != nil {
		return nil, err
	}
	if err := t.parsePreTokenizer(tj.PreTokenizer); err != nil {
		return nil, err
	}
	if err := t.parsePostProcessor(tj.PostProcessor); err != nil {
		return nil, err
	}
	return t, nil
}

type component struct {
	Type          string            `json:"type"`
	Lowercase     *bool             `json:"lowercase"`
	StripAccents  *bool             `json:"strip_accents"`
	CleanText     *bool             `json:"clean_text"`
	ChineseChars  *bool             `json:"handle_chinese_chars"`
	Normalizers   []json.RawMessage `json:"normalizers"`
	Pretokenizers []json.RawMessage `json:"pretokenizers"`
	Processors    []json.RawMessage `json:"processors"`
	AddPrefix     *bool             `json:"add_prefix_space"`
	PrependScheme string            `json:"prepend_scheme"`
	Replacement   string            `json:"replacement"`
	Pattern       map[string]string `json:"pattern"`
	Content       string            `json:"content"`
	PrependText   string            `json:"prepend"`
	Cls           []any             `json:"cls"`
	Sep           []any             `json:"sep"`
	Single        []map[string]struct {
		ID string `json:"id"`
	} `json:"single"`
	SpecialTokens map[string]struct {
		IDs []int64 `json:"ids"`
	} `json:"special_tokens"`
}

func parseNormalizer(raw json.RawMessage) (func(string) string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return func(s string) string { return s }, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch c.Type {
	case "BertNormalizer":
		lower := c.Lowercase == nil || *c.Lowercase
		strip := lower
		if c.StripAccents != nil {
			strip = *c.StripAccents
		}
		clean := c.CleanText == nil || *c.CleanText
		chinese := c.ChineseChars == nil || *c.ChineseChars
		return func(s string) string {
			var sb strings.Builder
			for _, r := range s {
				if clean {
					if r == 0 || r == 0xfffd || (unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r') {
						continue
					}
					if unicode.IsSpace(r) {
						r = ' '
					}
				}
				if chinese && isCJK(r) {
					sb.WriteByte(' ')
					sb.WriteRune(r)
					sb.WriteByte(' ')
					continue
				}
				sb.WriteRune(r)
			}
			out := sb.String()
			if strip {
				out = stripAccents(out)
			}
			if lower {
				out = strings.ToLower(out)
			}
			return out
		}, nil
	case "Lowercase":
		return strings.ToLower, nil
	case "NFC":
		return norm.NFC.String, nil
	case "NFD":
		return norm.NFD.String, nil
	case "NFKC":
		return norm.NFKC.String, nil
	case "NFKD":
		return norm.NFKD.String, nil
	case "StripAccents":
		return stripAccents, nil
	case "Strip":
		return strings.TrimSpace, nil
	case "Replace":
		from, to := c.Pattern["String"], c.Content
		if from == "" {
			return nil, errors.New("normalizer Replace: only String patterns are supported")
		}
		return func(s string) string { return strings.ReplaceAll(s, from, to) }, nil
	case "Prepend":
		return func(s string) string { return c.PrependText + s }, nil
	case "Sequence":
		var fns []func(string) string
		for _, n := range c.Normalizers {
			f, err := parseNormalizer(n)
			if err != nil {
				return nil, err
			}
			fns = append(fns, f)
		}
		return func(s string) string {
			for _, f := range fns {
				s = f(s)
			}
			return s
		}, nil
	}
	return nil, fmt.Errorf("normalizer %q is not supported", c.Type)
}

func stripAccents(s string) string {
	var sb strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) || (r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2CEAF) || (r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

func (t *Tokenizer) parsePreTokenizer(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch c.Type {
	case "BertPreTokenizer", "Whitespace", "WhitespaceSplit", "Punctuation":
		t.bertSplit = true
	case "ByteLevel":
		t.byteLevel = true
		t.addPrefix = c.AddPrefix != nil && *c.AddPrefix
	case "Metaspace":
		t.metaspace = c.Replacement
		if t.metaspace == "" {
			t.metaspace = "▁"
		}
		t.addPrefix = c.PrependScheme != "never" && (c.AddPrefix == nil || *c.AddPrefix)
	case "Sequence":
		for _, p := range c.Pretokenizers {
			if err := t.parsePreTokenizer(p); err != nil {
				return err
			}
		}
	case "Digits", "Split":
		// Finer splits; the model's merges/vocabulary still apply to
		// whole words, which costs little accuracy for retrieval text.
	default:
		return fmt.Errorf("pre_tokenizer %q is not supported", c.Type)
	}
	return nil
}

func (t *Tokenizer) parsePostProcessor(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("post_processor: %w", err)
	}
	pair := func(v []any) ([]int64, error) {
		if len(v) != 2 {
			return nil, errors.New("post_processor: cls/sep must be [token, id]")
		}
		id, ok := v[1].(float64)
		if !ok {
			return nil, errors.New("post_processor: cls/sep id is not a number")
		}
		return []int64{int64(id)}, nil
	}
	switch c.Type {
	case "BertProcessing", "RobertaProcessing":
		var err error
		if t.prefixIDs, err = pair(c.Cls); err != nil {
			return err
		}
		if t.suffixIDs, err = pair(c.Sep); err != nil {
			return err
		}
	case "TemplateProcessing":
		seenSeq := false
		for _, item := range c.Single {
			if _, ok := item["Sequence"]; ok {
				seenSeq = true
				continue
			}
			st, ok := item["SpecialToken"]
			if !ok {
				continue
			}
			ids := c.SpecialTokens[st.ID].IDs
			if ids == nil {
				id, ok := t.vocab[st.ID]
				if !ok {
					return fmt.Errorf("post_processor: special token %q unknown", st.ID)
				}
				ids = []int64{id}
			}
			if seenSeq {
				t.suffixIDs = append(t.suffixIDs, ids...)
			} else {
				t.prefixIDs = append(t.prefixIDs, ids...)
			}
		}
	case "ByteLevel":
	case "Sequence":
		for _, p := range c.Processors {
			if err := t.parsePostProcessor(p); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("post_processor %q is not supported", c.Type)
	}
	return nil
}

// Encode returns the token ids of text with the special tokens the
// post-processor adds, truncated to at most maxTokens ids (0: no limit);
// truncation keeps the special tokens.
func (t *Tokenizer) Encode(text string, maxTokens int) []int64 {
	var body []int64
	for _, piece := range t.splitAdded(text) {
		if piece.special {
			body = append(body, piece.id)
			continue
		}
		body = append(body, t.encodeText(piece.text)...)
	}
	if maxTokens > 0 {
		room := maxTokens - len(t.prefixIDs) - len(t.suffixIDs)
		if room < 0 {
			room = 0
		}
		if len(body) > room {
			body = body[:room]
		}
	}
	out := make([]int64, 0, len(body)+len(t.prefixIDs)+len(t.suffixIDs))
	out = append(out, t.prefixIDs...)
	out = append(out, body...)
	return append(out, t.suffixIDs...)
}

type textPiece struct {
	text    string
	special bool
	id      int64
}

// splitAdded cuts out special added tokens, which are never split.
func (t *Tokenizer) splitAdded(text string) []textPiece {
	if len(t.added) == 0 {
		return []textPiece{{text: text}}
	}
	keys := make([]string, 0, len(t.added))
	for k := range t.added {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	var out []textPiece
	start := 0
	for i := 0; i < len(text); {
		matched := ""
		for _, k := range keys {
			if k != "" && strings.HasPrefix(text[i:], k) {
				matched = k
				break
			}
		}
		if matched == "" {
			i++
			continue
		}
		if start < i {
			out = append(out, textPiece{text: text[start:i]})
		}
		out = append(out, textPiece{special: true, id: t.added[matched]})
		i += len(matched)
		start = i
	}
	if start < len(text) {
		out = append(out, textPiece{text: text[start:]})
	}
	return out
}

func (t *Tokenizer) encodeText(text string) []int64 {
	text = t.normalize(text)
	var ids []int64
	switch t.modelType {
	case "WordPiece":
		for _, w := range bertWords(text) {
			ids = append(ids, t.wordPiece(w)...)
		}
	case "BPE":
		switch {
		case t.byteLevel:
			if t.addPrefix && !strings.HasPrefix(text, " ") {
				text = " " + text
			}
			for _, w := range gpt2Split(text) {
				var sb strings.Builder
				for i := 0; i < len(w); i++ {
					sb.WriteRune(byteToRune[w[i]])
				}
				ids = append(ids, t.bpe(sb.String())...)
			}
		case t.metaspace != "":
			text = strings.ReplaceAll(text, " ", t.metaspace)
			if t.addPrefix && !strings.HasPrefix(text, t.metaspace) {
				text = t.metaspace + text
			}
			for _, w := range splitBefore(text, t.metaspace) {
				ids = append(ids, t.bpe(w)...)
			}
		default:
			for _, w := range bertWords(text) {
				ids = append(ids, t.bpe(w)...)
			}
		}
	}
	return ids
}

// bertWords splits on whitespace and makes every punctuation character a
// word of its own (BertPreTokenizer).
func bertWords(s string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			flush()
		case isBertPunct(r):
			flush()
			out = append(out, string(r))
		default:
			cur.WriteRune(r)
		}
	}
	flush()
	return out
}

func isBertPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// wordPiece is greedy longest-match-first over one word.
func (t *Tokenizer) wordPiece(w string) []int64 {
	if utf8.RuneCountInString(w) > t.maxWordChars {
		return t.unk()
	}
	var out []int64
	for start := 0; start < len(w); {
		end := len(w)
		found := int64(-1)
		for end > start {
			sub := w[start:end]
			if start > 0 {
				sub = t.prefix + sub
			}
			if id, ok := t.vocab[sub]; ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(w[start:end])
			end -= size
		}
		if found < 0 {
			return t.unk()
		}
		out = append(out, found)
		start = end
	}
	return out
}

func (t *Tokenizer) unk() []int64 {
	if t.unkID < 0 {
		return nil
	}
	return []int64{t.unkID}
}

// bpe merges the symbols of one pre-token by merge rank.
func (t *Tokenizer) bpe(w string) []int64 {
	if w == "" {
		return nil
	}
	var syms []string
	for _, r := range w {
		syms = append(syms, string(r))
	}
	if t.contPrefix != "" {
		for i := 1; i < len(syms); i++ {
			syms[i] = t.contPrefix + syms[i]
		}
	}
	if t.endSuffix != "" {
		syms[len(syms)-1] += t.endSuffix
	}
	for len(syms) > 1 {
		best, bestRank := -1, int(^uint(0)>>1)
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := t.ranks[[2]string{syms[i], syms[i+1]}]; ok && r < bestRank {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			break
		}
		merged := syms[best] + strings.TrimPrefix(syms[best+1], t.contPrefix)
		syms = append(syms[:best+1], syms[best+2:]...)
		syms[best] = merged
	}
	var out []int64
	for _, s := range syms {
		if id, ok := t.vocab[s]; ok {
			out = append(out, id)
			continue
		}
		if t.byteFallbk {
			ok := true
			var ids []int64
			for i := 0; i < len(s); i++ {
				id, found := t.vocab[fmt.Sprintf("<0x%02X>", s[i])]
				if !found {
					ok = false
					break
				}
				ids = append(ids, id)
			}
			if ok {
				out = append(out, ids...)
				continue
			}
		}
		out = append(out, t.unk()...)
	}
	return out
}

// byteToRune is GPT-2's bytes_to_unicode: printable bytes map to
// themselves, the rest to code points from 256 up.
var byteToRune = func() [256]rune {
	var m [256]rune
	n := 0
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			m[b] = rune(b)
		} else {
			m[b] = rune(256 + n)
			n++
		}
	}
	return m
}()

// gpt2Split is the GPT-2 pre-tokenizer pattern
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// written out, since Go's regexp has no lookahead.
func gpt2Split(s string) []string {
	rs := []rune(s)
	var out []string
	isL := unicode.IsLetter
	isN := unicode.IsNumber
	isS := unicode.IsSpace
	other := func(r rune) bool { return !isS(r) && !isL(r) && !isN(r) }
	i := 0
	for i < len(rs) {
		// Contractions.
		if rs[i] == '\'' && i+1 < len(rs) {
			matched := 0
			for _, c := range []string{"re", "ve", "ll", "s", "t", "m", "d"} {
				cr := []rune(c)
				if i+1+len(cr) <= len(rs) && string(rs[i+1:i+1+len(cr)]) == c {
					matched = 1 + len(cr)
					break
				}
			}
			if matched > 0 {
				out = append(out, string(rs[i:i+matched]))
				i += matched
				continue
			}
		}
		j := i
		if rs[j] == ' ' && j+1 < len(rs) && !isS(rs[j+1]) {
			j++
		}
		var class func(rune) bool
		switch {
		case isL(rs[j]):
			class = isL
		case isN(rs[j]):
			class = isN
		case other(rs[j]):
			class = other
		}
		if class != nil {
			k := j
			for k < len(rs) && class(rs[k]) {
				k++
			}
			out = append(out, string(rs[i:k]))
			i = k
			continue
		}
		// Whitespace run: \s+(?!\S) leaves the last space to the next word.
		k := i
		for k < len(rs) && isS(rs[k]) {
			k++
		}
		if k < len(rs) && k-i > 1 {
			k--
		}
		out = append(out, string(rs[i:k]))
		i = k
	}
	return out
}

// splitBefore splits s before every occurrence of sep (Metaspace split).
func splitBefore(s, sep string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.Index(s[len(sep):], sep)
		if !strings.HasPrefix(s, sep) {
			i = strings.Index(s, sep)
			if i == 0 {
				i = -1
			}
			if i < 0 {
				out = append(out, s)
				break
			}
			out = append(out, s[:i])
			s = s[i:]
			continue
		}
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+len(sep)])
		s = s[i+len(sep):]
	}
	return out
}
