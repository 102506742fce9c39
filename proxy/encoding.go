package proxy

import (
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// A client speaks its client_encoding; the Handler always sees UTF-8 (its
// questions go to an LLM, a retriever and pgx pools that speak UTF-8), and
// what a Statement sends on the client's own upstream session is turned back
// into the client's encoding, so that a literal in generated SQL means what
// the question meant. Results stay in the client's encoding: they go to the
// client, which asked for it.

// clientEncodings maps PostgreSQL's encoding names (as ParameterStatus
// reports client_encoding) to converters. UTF8 and SQL_ASCII need none.
var clientEncodings = map[string]encoding.Encoding{
	"LATIN1": charmap.ISO8859_1, "LATIN2": charmap.ISO8859_2, "LATIN3": charmap.ISO8859_3,
	"LATIN4": charmap.ISO8859_4, "LATIN5": charmap.ISO8859_9, "LATIN6": charmap.ISO8859_10,
	"LATIN7": charmap.ISO8859_13, "LATIN8": charmap.ISO8859_14, "LATIN9": charmap.ISO8859_15,
	"LATIN10":    charmap.ISO8859_16,
	"ISO_8859_5": charmap.ISO8859_5, "ISO_8859_6": charmap.ISO8859_6,
	"ISO_8859_7": charmap.ISO8859_7, "ISO_8859_8": charmap.ISO8859_8,
	"WIN1250": charmap.Windows1250, "WIN1251": charmap.Windows1251, "WIN1252": charmap.Windows1252,
	"WIN1253": charmap.Windows1253, "WIN1254": charmap.Windows1254, "WIN1255": charmap.Windows1255,
	"WIN1256": charmap.Windows1256, "WIN1257": charmap.Windows1257, "WIN1258": charmap.Windows1258,
	"WIN866": charmap.CodePage866, "WIN874": charmap.Windows874,
	"KOI8R": charmap.KOI8R, "KOI8U": charmap.KOI8U,
	"EUC_JP": japanese.EUCJP, "SJIS": japanese.ShiftJIS,
	"EUC_KR": korean.EUCKR, "UHC": korean.EUCKR,
	"EUC_CN": simplifiedchinese.GBK, "GBK": simplifiedchinese.GBK, "GB18030": simplifiedchinese.GB18030,
	"BIG5": traditionalchinese.Big5,
}

// passThrough says whether text in encoding enc needs no conversion: UTF-8,
// SQL_ASCII (PostgreSQL converts nothing either), or pure ASCII, which every
// client encoding PostgreSQL supports keeps as is.
func passThrough(enc, s string) bool {
	if enc == "UTF8" || enc == "" || enc == "SQL_ASCII" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// decodeClientText converts text a client sent in its client_encoding to
// UTF-8. conn.intercept calls it only for statements the Handler claims.
func decodeClientText(enc, s string) (string, error) {
	if passThrough(enc, s) {
		return s, nil
	}
	e, ok := clientEncodings[enc]
	if !ok {
		return "", Errorf(codeFeatureNotSupp, "atrium cannot convert a question from client encoding %q to UTF8", enc)
	}
	out, err := e.NewDecoder().String(s)
	if err != nil {
		return "", &Error{Code: codeCharacterNotInRepertoire, Message: "invalid byte sequence for encoding \"" + enc + "\"", Err: err}
	}
	return out, nil
}

// encodeClientText converts UTF-8 text a Statement sends upstream to the
// session's client_encoding, failing like the server (22P05) for a character
// the encoding lacks.
func encodeClientText(enc, s string) (string, error) {
	if passThrough(enc, s) {
		return s, nil
	}
	if !utf8.ValidString(s) {
		return "", &Error{Code: codeCharacterNotInRepertoire, Message: "invalid byte sequence for encoding \"UTF8\""}
	}
	e, ok := clientEncodings[enc]
	if !ok {
		return "", Errorf(codeFeatureNotSupp, "atrium cannot convert a statement from UTF8 to client encoding %q", enc)
	}
	out, err := e.NewEncoder().String(s)
	if err != nil {
		return "", &Error{Code: codeUntranslatableCharacter, Message: "character has no equivalent in encoding \"" + enc + "\"", Err: err}
	}
	return out, nil
}
